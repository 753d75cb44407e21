//! The README's example is the crate documentation's example (which runs as
//! a doctest), so the README shows code that compiles and passes: the first
//! `rust` block of README.md must equal the block under `# Example` in
//! `src/lib.rs`, with rustdoc's hidden lines (`# `) shown, line by line with
//! indentation ignored.

fn readme_example(readme: &str) -> Vec<String> {
    let mut lines = readme.lines().skip_while(|l| l.trim() != "```rust").skip(1);
    let block: Vec<String> = lines
        .by_ref()
        .take_while(|l| l.trim() != "```")
        .map(|l| l.trim().to_owned())
        .collect();
    assert!(!block.is_empty(), "README.md has no ```rust block");
    block
}

fn doc_example(lib: &str) -> Vec<String> {
    let doc: Vec<&str> = lib
        .lines()
        .take_while(|l| l.starts_with("//!") || l.trim().is_empty())
        .filter_map(|l| l.strip_prefix("//!"))
        .map(|l| l.strip_prefix(' ').unwrap_or(l))
        .collect();
    let mut lines = doc
        .into_iter()
        .skip_while(|l| *l != "# Example")
        .skip_while(|l| !l.starts_with("```"))
        .skip(1);
    let block: Vec<String> = lines
        .by_ref()
        .take_while(|l| !l.starts_with("```"))
        .map(|l| match l {
            "#" => String::new(),
            l => l.strip_prefix("# ").unwrap_or(l).trim().to_owned(),
        })
        .collect();
    assert!(
        !block.is_empty(),
        "src/lib.rs has no example under `# Example`"
    );
    block
}

#[test]
fn the_readme_example_is_the_doctested_one() {
    let root = env!("CARGO_MANIFEST_DIR");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).expect("README.md");
    let lib = std::fs::read_to_string(format!("{root}/src/lib.rs")).expect("src/lib.rs");
    let (readme, doc) = (readme_example(&readme), doc_example(&lib));
    assert!(
        readme == doc,
        "README.md's example differs from the crate doc's (src/lib.rs); copy it over:\n{}",
        doc.join("\n")
    );
}
