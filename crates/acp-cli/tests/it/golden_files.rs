//! The golden-file helper itself: byte-for-byte comparison, and `BLESS=1`
//! rewriting a missing or different file while still failing.

use crate::common;
use common::check_golden;

#[test]
fn a_matching_file_passes_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.txt");
    std::fs::write(&path, "one\ntwo\n").unwrap();
    assert_eq!(check_golden(&path, "one\ntwo\n", false), Ok(()));
    assert_eq!(check_golden(&path, "one\ntwo\n", true), Ok(()));
    // A missing final newline or a trailing space is a difference.
    assert!(check_golden(&path, "one\ntwo", false).is_err());
    assert!(check_golden(&path, "one \ntwo\n", false).is_err());
}

#[test]
fn a_difference_fails_with_a_diff_and_leaves_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.txt");
    std::fs::write(&path, "one\ntwo\n").unwrap();
    let err = check_golden(&path, "one\n2\n", false).unwrap_err();
    assert!(err.contains("-two\n+2\n"), "{err}");
    assert!(err.contains("BLESS=1"), "{err}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "one\ntwo\n");
}

#[test]
fn a_missing_file_fails_and_says_how_to_create_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new.txt");
    let err = check_golden(&path, "x\n", false).unwrap_err();
    assert!(err.contains("missing") && err.contains("BLESS=1"), "{err}");
    assert!(!path.exists());
}

#[test]
fn blessing_rewrites_but_still_fails() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub/new.txt");
    let err = check_golden(&path, "fresh\n", true).unwrap_err();
    assert!(err.contains("was missing"), "{err}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "fresh\n");
    let err = check_golden(&path, "changed\n", true).unwrap_err();
    assert!(err.contains("was different"), "{err}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "changed\n");
    // Once written, the next run without BLESS passes.
    assert_eq!(check_golden(&path, "changed\n", false), Ok(()));
}
