//! How the tests obtain the official schemas (`common/official.rs`): the
//! directory they build has every file with its pinned checksum, the derived
//! stable schemas hold nothing unstable, a broken cache is repaired without
//! the network, and an unreachable registry fails with an error that names
//! the package and the command to run.

use crate::common;

use common::official::derive::{
    UNSTABLE_MARKER, canonical, meta_from_schema, sha256_hex, sri_sha512,
};
use common::official::{self, Cache, FOLDERS};
use common::*;
use serde_json::{Value, json};
use std::path::Path;

/// An npm registry address where nothing listens (a port just freed).
fn unreachable_registry() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("address").port();
    drop(listener);
    format!("http://127.0.0.1:{port}/")
}

/// A cache in `dir` whose npm can reach no registry and has its own empty
/// package cache.
fn offline_cache(dir: &Path) -> Cache {
    Cache::new(dir.join("cache"))
        .npm_env("npm_config_registry", &unreachable_registry())
        .npm_env(
            "npm_config_cache",
            &dir.join("npm-cache").display().to_string(),
        )
        .npm_env("npm_config_fetch_retries", "0")
        .npm_env("npm_config_offline", "false")
}

/// The cache under `target/` (filled from the registry if needed, even when
/// `ACP_SCHEMA_DIR` points the other tests elsewhere): its schema directory.
fn real_cache() -> std::path::PathBuf {
    static DIR: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        Cache::new(official::default_cache_root())
            .ensure()
            .unwrap_or_else(|e| panic!("{e}"))
    })
    .clone()
}

fn real_tarballs() -> std::path::PathBuf {
    real_cache();
    Cache::new(official::default_cache_root()).tarball_dir()
}

fn copy_tarballs(into: &Cache) {
    std::fs::create_dir_all(into.tarball_dir()).expect("tarball dir");
    for folder in FOLDERS {
        let name = folder.package.tarball_name();
        std::fs::copy(real_tarballs().join(&name), into.tarball_dir().join(&name))
            .expect("copy tarball");
    }
}

#[test]
fn the_schema_directory_has_every_file_the_tests_read() {
    let dir = schema_dir();
    for file in official::expected_files() {
        let value: Value = serde_json::from_slice(
            &std::fs::read(dir.join(&file)).unwrap_or_else(|e| panic!("{file}: {e}")),
        )
        .unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(value.is_object(), "{file}");
    }
    // The three files are the releases the tests say they are.
    assert_eq!(
        defs(SchemaFile::Seed).len(),
        100,
        "v0.10.7 has 100 stable defs"
    );
    assert_eq!(
        defs(SchemaFile::Latest).len(),
        170,
        "1.21.0 has 170 stable defs"
    );
    assert_eq!(
        meta_json(SchemaFile::Latest)["agentMethods"]["logout"],
        "logout"
    );
    assert!(meta_json(SchemaFile::Seed).get("protocolMethods").is_none());
}

#[test]
fn the_derived_stable_schemas_hold_nothing_unstable() {
    for file in [SchemaFile::Seed, SchemaFile::Latest] {
        let text = canonical(schema(file));
        assert!(
            !text.contains(UNSTABLE_MARKER),
            "{}: an unstable part is left",
            file.label()
        );
        let unstable = serde_json::from_slice::<Value>(
            &std::fs::read(schema_dir().join(file.label()).join("schema.unstable.json"))
                .expect("unstable schema"),
        )
        .expect("JSON");
        assert!(canonical(&unstable).contains(UNSTABLE_MARKER));
        // Every stable def is in the unstable file; the stable file only
        // ever drops things.
        for name in defs(file).keys() {
            assert!(unstable["$defs"].get(name).is_some(), "{name}");
        }
    }
    for method in [
        "session/fork",
        "nes/start",
        "document/didOpen",
        "providers/list",
    ] {
        assert!(
            defs(SchemaFile::Latest)
                .values()
                .all(|d| d.get("x-method") != Some(&json!(method))),
            "{method} is unstable at 1.21.0"
        );
    }
    for method in [
        "$/cancel_request",
        "session/list",
        "session/set_config_option",
    ] {
        assert!(
            defs(SchemaFile::Seed)
                .values()
                .all(|d| d.get("x-method") != Some(&json!(method))),
            "{method} is unstable at v0.10.7"
        );
    }
}

#[test]
fn meta_is_derived_from_x_method_and_x_side() {
    let schema = json!({"$defs": {
        "A": {"x-method": "session/set_mode", "x-side": "agent"},
        "AR": {"x-method": "session/set_mode", "x-side": "agent"},
        "B": {"x-method": "document/didOpen", "x-side": "agent"},
        "C": {"x-method": "$/cancel_request", "x-side": "protocol"},
        "D": {"x-method": "mcp/message", "x-side": "both"},
        "E": {"x-method": "fs/read_text_file", "x-side": "client"},
        "F": {"type": "string"},
    }});
    assert_eq!(
        meta_from_schema(&schema, 1),
        json!({
            "agentMethods": {
                "document_did_open": "document/didOpen",
                "mcp_message": "mcp/message",
                "session_set_mode": "session/set_mode",
            },
            "clientMethods": {
                "fs_read_text_file": "fs/read_text_file",
                "mcp_message": "mcp/message",
            },
            "protocolMethods": {"cancel_request": "$/cancel_request"},
            "version": 1,
        })
    );
}

#[test]
fn the_canonical_form_sorts_keys_and_drops_whitespace() {
    let value: Value =
        serde_json::from_str(r#"{ "b": [1, {"d": "é\n", "c": null}], "a": true }"#).expect("JSON");
    assert_eq!(
        canonical(&value),
        r#"{"a":true,"b":[1,{"c":null,"d":"é\n"}]}"#
    );
}

#[test]
fn checksums_are_in_npm_and_sha256sum_form() {
    assert_eq!(
        sha256_hex(b"abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    // `printf abc | openssl dgst -sha512 -binary | base64`
    assert_eq!(
        sri_sha512(b"abc"),
        "sha512-3a81oZNherrMQXNJriBBMRLm+k6JqX6iCp7u5ktV05ohkpkqJ0/BqDa6PCOj/uu9RU1EI2Q86A4qmslPpUyknw=="
    );
    assert_eq!(sri_sha512(b"ab").len(), "sha512-".len() + 88);
}

#[test]
fn an_unreachable_registry_is_a_clear_error_naming_the_package_and_the_command() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cache = offline_cache(dir.path());
    let err = cache.ensure().expect_err("nothing can be downloaded");
    assert!(
        err.contains("@agentclientprotocol/sdk@0.13.1"),
        "names the package: {err}"
    );
    assert!(
        err.contains("`npm pack @agentclientprotocol/sdk@0.13.1`"),
        "names the command: {err}"
    );
    assert!(
        err.contains(&cache.tarball_dir().display().to_string()),
        "{err}"
    );
    assert!(err.contains("ACP_SCHEMA_DIR"), "names the override: {err}");
    assert!(!cache.schema_dir().join("seed/schema.json").exists());
}

#[test]
fn without_npm_the_error_says_so() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cache = Cache::new(dir.path().join("cache")).npm_program("npm-that-is-not-installed");
    let err = cache.ensure().expect_err("no npm");
    assert!(err.contains("cannot be run"), "{err}");
    assert!(err.contains("Node.js"), "{err}");
    assert!(
        err.contains("`npm pack @agentclientprotocol/sdk@0.13.1`"),
        "{err}"
    );
}

#[test]
fn cached_tarballs_are_enough_and_a_damaged_file_is_restored_offline() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cache = offline_cache(dir.path());
    copy_tarballs(&cache);
    let built = cache.ensure().expect("built from the cached tarballs");
    for file in official::expected_files() {
        assert_eq!(
            std::fs::read(built.join(&file)).expect("built file"),
            std::fs::read(real_cache().join(&file)).expect("real file"),
            "{file}"
        );
    }
    // A truncated file (a killed writer, a full disk) and a hand edit are
    // both noticed and replaced.
    let seed = built.join("seed/schema.json");
    let good = std::fs::read(&seed).expect("seed");
    std::fs::write(&seed, &good[..good.len() / 2]).expect("truncate");
    let meta = built.join("latest/meta.json");
    std::fs::write(&meta, r#"{"version": 2}"#).expect("edit");
    cache.ensure().expect("repaired offline");
    assert_eq!(std::fs::read(&seed).expect("seed"), good);
    assert_eq!(
        std::fs::read(&meta).expect("meta"),
        std::fs::read(real_cache().join("latest/meta.json")).expect("real meta")
    );
}

#[test]
fn a_tarball_that_does_not_match_its_pin_is_removed_and_never_used() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cache = offline_cache(dir.path());
    copy_tarballs(&cache);
    // Another version's tarball under 0.13.1's name.
    let seed_tgz = cache.tarball_dir().join(FOLDERS[0].package.tarball_name());
    std::fs::copy(
        cache.tarball_dir().join(FOLDERS[1].package.tarball_name()),
        &seed_tgz,
    )
    .expect("swap");
    let err = cache.ensure().expect_err("the swapped tarball is refused");
    assert!(err.contains("@agentclientprotocol/sdk@0.13.1"), "{err}");
    assert!(!seed_tgz.exists(), "the bad tarball was removed");
    assert!(!cache.schema_dir().join("seed/schema.json").exists());
}

#[test]
fn an_override_directory_must_be_complete() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join("latest")).expect("dir");
    std::fs::write(dir.path().join("latest/schema.json"), "{}").expect("file");
    let err = official::check_override(dir.path()).expect_err("incomplete");
    assert!(err.contains("ACP_SCHEMA_DIR"), "{err}");
    assert!(err.contains("seed/schema.json"), "{err}");
    assert!(!err.contains("latest/schema.json,"), "{err}");
    // The directory the tests use is complete by that measure.
    assert_eq!(official::check_override(&schema_dir()), Ok(schema_dir()));
}
