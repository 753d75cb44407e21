//! The READMEs' protocol v2 examples (crate `acp`'s README and the `acp`
//! section of the repository's) are the examples of `acp::negotiate`'s
//! documentation, which run as doctests with feature `v2`: the two `rust`
//! blocks after each README's "Protocol v2" heading must equal the blocks
//! under `# Example: …` in `src/negotiate/mod.rs`, with rustdoc's hidden
//! lines (`# `) shown, line by line with indentation ignored.

/// The code blocks of `text` (a README, or doc lines) after the first line
/// containing `after`, trimmed line by line.
fn blocks(text: &[&str], after: &str, fence: impl Fn(&str) -> bool) -> Vec<Vec<String>> {
    let mut lines = text.iter().skip_while(|l| !l.contains(after)).skip(1);
    let mut out = Vec::new();
    while lines.by_ref().any(|l| fence(l.trim())) {
        let block: Vec<String> = lines
            .by_ref()
            .take_while(|l| l.trim() != "```")
            .map(|l| match l.trim() {
                "#" => String::new(),
                l => l.strip_prefix("# ").unwrap_or(l).to_owned(),
            })
            .collect();
        out.push(block);
    }
    out
}

fn doc_examples() -> Vec<Vec<String>> {
    let source = include_str!("../../src/negotiate/mod.rs");
    let doc: Vec<&str> = source
        .lines()
        .filter_map(|l| l.strip_prefix("//!"))
        .map(|l| l.strip_prefix(' ').unwrap_or(l))
        .collect();
    let examples = blocks(&doc, "# Example: an agent", |l| l.starts_with("```"));
    assert_eq!(examples.len(), 2, "two examples in src/negotiate/mod.rs");
    examples
}

fn readme_examples(readme: &str) -> Vec<Vec<String>> {
    let lines: Vec<&str> = readme.lines().collect();
    let mut examples = blocks(&lines, "Protocol v2", |l| l == "```rust");
    examples.truncate(2);
    examples
}

#[test]
fn the_readmes_v2_examples_are_the_doctested_ones() {
    let docs = doc_examples();
    for (name, readme) in [
        ("crates/acp/README.md", include_str!("../../README.md")),
        ("README.md", include_str!("../../../../README.md")),
    ] {
        let examples = readme_examples(readme);
        assert!(
            examples == docs,
            "{name}'s protocol v2 examples differ from src/negotiate/mod.rs's; copy them over:\n\n{}",
            docs.iter()
                .map(|b| b.join("\n"))
                .collect::<Vec<_>>()
                .join("\n\n")
        );
    }
}
