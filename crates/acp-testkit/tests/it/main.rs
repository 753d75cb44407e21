//! `acp_testkit::bin` finds the programs cargo built for this test (cargo
//! builds a package's binaries for its own integration tests), and refuses
//! a name that is not a fixture.

use std::path::Path;

#[test]
fn bin_finds_the_programs_cargo_built_for_this_test() {
    let built = [
        ("acp-test-agent", env!("CARGO_BIN_EXE_acp-test-agent")),
        ("acp-hostile-agent", env!("CARGO_BIN_EXE_acp-hostile-agent")),
        ("acp-check-mutant", env!("CARGO_BIN_EXE_acp-check-mutant")),
        (
            "acp-check-mutant-v2",
            env!("CARGO_BIN_EXE_acp-check-mutant-v2"),
        ),
        (
            "acp-check-mutant-client",
            env!("CARGO_BIN_EXE_acp-check-mutant-client"),
        ),
        (
            "acp-check-mutant-client-v2",
            env!("CARGO_BIN_EXE_acp-check-mutant-client-v2"),
        ),
    ];
    assert_eq!(built.map(|(name, _)| name), acp_testkit::FIXTURES);
    for (name, path) in built {
        assert_eq!(acp_testkit::bin(name), Path::new(path), "{name}");
        assert!(Path::new(path).is_file(), "{path}");
    }
}

#[test]
#[should_panic(expected = "acp-agent is not a fixture of acp-testkit")]
fn a_name_that_is_not_a_fixture_is_refused() {
    acp_testkit::bin("acp-agent");
}
