//! Agents from the ACP registry: `acp agents search|add|remove|update`,
//! running an added agent with `--agent ID`, and the safety of downloads
//! and archives.
//!
//! The registry is a fixture served by a small HTTP server on 127.0.0.1
//! inside the test ([`Server`]); its archives are built by the test; the
//! agent inside them is a shell script that checks its arguments and
//! environment, then runs the built `acp` as `acp mock` with a script that
//! says which version it is. Nothing here uses the network.

use crate::common;
// Under `tests/it/`, these are `mod server;` and `mod archives;` of
// `registry.rs`, without the paths.
mod archives;
mod server;

use archives::*;
use common::*;
use serde_json::{Value, json};
use server::*;
use std::io::{BufRead, BufReader, Read};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

// ---------------------------------------------------------------------------
// The fixture: a sandbox, the server, the registry it serves.

struct Fixture {
    sb: Sandbox,
    server: Server,
    agents: Mutex<Vec<Value>>,
}

impl Fixture {
    fn new() -> Fixture {
        let server = Server::start();
        let sb = Sandbox::new().env("ACP_REGISTRY_URL", &server.url("/registry.json"));
        let fixture = Fixture {
            sb,
            server,
            agents: Mutex::default(),
        };
        fixture.publish(Vec::new());
        fixture
    }

    /// Serves a registry of `agents` (a new ETag each time).
    fn publish(&self, agents: Vec<Value>) {
        let body = json!({"version": "1.0.0", "agents": agents}).to_string();
        let etag = format!("\"{:x}\"", md5ish(&body));
        *self.agents.lock().unwrap() = agents;
        self.server.set(
            "/registry.json",
            Route {
                etag: Some(etag),
                ..Route::ok(body)
            },
        );
    }

    /// acp's data directory in the sandbox.
    fn data(&self) -> PathBuf {
        self.sb.dir.path().join("home/.local/share/acp")
    }

    /// Runs acp; its output with the server's address as `$SERVER`.
    fn run(&self, args: &[&str]) -> Output {
        let mut out = self.sb.run(args);
        out.stdout = out.stdout.replace(&self.server.base(), "$SERVER");
        out.stderr = out.stderr.replace(&self.server.base(), "$SERVER");
        out
    }

    /// A binary agent `id` at `version` packed as `format`: its archive
    /// served at `/dl/ID-VERSION.EXT`. Returns the registry entry and the
    /// archive.
    fn binary_agent(&self, id: &str, version: &str, format: Format) -> (Value, Vec<u8>) {
        let (members, cmd) = match format {
            Format::Raw => {
                let mock = self.sb.root().join(format!("{id}-{version}.mock"));
                std::fs::write(&mock, mock_script(version)).unwrap();
                let script = agent_script(&format!("'{}'", mock.display()));
                (vec![file("x", script, 0o644)], "./agent".to_owned())
            }
            _ => {
                // The mock script beside the agent, as a release would have.
                let dir = format!("agent-{version}");
                let script = agent_script("\"$(dirname \"$0\")/../share/agent.mock\"");
                (
                    vec![
                        Member::Dir(format!("{dir}/")),
                        Member::Dir(format!("{dir}/bin/")),
                        file(format!("{dir}/bin/agent"), script, 0o755),
                        Member::Dir(format!("{dir}/share/")),
                        file(
                            format!("{dir}/share/agent.mock"),
                            mock_script(version),
                            0o644,
                        ),
                    ],
                    format!("./{dir}/bin/agent"),
                )
            }
        };
        let bytes = format.pack(&members);
        let path = format!("/dl/{id}-{version}{}", format.suffix());
        self.server.set(&path, Route::ok(bytes.clone()));
        let entry = json!({
            "id": id,
            "name": format!("Agent {id}"),
            "version": version,
            "description": format!("The {id} test agent"),
            "authors": ["Tests"],
            "license": "MIT",
            "distribution": {"binary": {platform(): {
                "archive": self.server.url(&path),
                "cmd": cmd,
                "args": ["--acp-flag"],
                "env": {"GREETING": "hi"},
            }}},
        });
        (entry, bytes)
    }

    /// An agent whose archive is `bytes` (served at `/dl/NAME`) and whose
    /// command is `cmd`.
    fn agent_with_archive(&self, id: &str, name: &str, bytes: Vec<u8>, cmd: &str) -> Value {
        let path = format!("/dl/{name}");
        self.server.set(&path, Route::ok(bytes));
        json!({
            "id": id, "name": id, "version": "1.0.0", "description": "hostile",
            "distribution": {"binary": {platform(): {
                "archive": self.server.url(&path), "cmd": cmd,
            }}},
        })
    }

    /// Every file and directory under the data directory, relative.
    fn data_files(&self) -> Vec<String> {
        files_under(&self.data())
    }
}

/// A cheap content hash for ETags.
fn md5ish(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}

/// Every path under `dir` (not following links), relative, sorted;
/// directories end with `/`.
fn files_under(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(here) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&here) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(dir).unwrap().display().to_string();
            if std::fs::symlink_metadata(&path).unwrap().is_dir() {
                found.push(format!("{rel}/"));
                stack.push(path);
            } else {
                found.push(rel);
            }
        }
    }
    found.sort();
    found
}

// ---------------------------------------------------------------------------
// Search.

#[test]
fn search_lists_matches_with_their_distribution_and_whether_added() {
    let f = Fixture::new();
    let (binary, _) = f.binary_agent("bin-agent", "1.0.0", Format::TarGz);
    f.publish(vec![
        binary,
        json!({"id": "npx-agent", "name": "Node Agent", "version": "2.1.0",
               "description": "Runs from npm", "repository": "https://example.com/n",
               "distribution": {"npx": {"package": "@example/npx-agent@2.1.0"},
                                "uvx": {"package": "npx-agent==2.1.0"}}}),
        json!({"id": "mac-only", "name": "Mac Agent", "version": "0.3.0",
               "description": "Only for macOS",
               "distribution": {"binary": {"darwin-aarch64": {
                   "archive": "https://example.com/m.zip", "cmd": "./m"}}}}),
        json!({"id": "Bad/Id", "name": "x", "version": "1.0.0", "distribution": {}}),
    ]);
    let out = f.run(&["agents", "search"]);
    assert_code(&out, 0);
    let mac = if platform() == "darwin-aarch64" {
        "binary".to_owned()
    } else {
        format!("none for {}", platform())
    };
    let w = mac.len().max("DISTRIBUTION".len());
    let expected = format!(
        "ID         NAME             VERSION  {:<w$}  ADDED\n\
         bin-agent  Agent bin-agent  1.0.0    {:<w$}  -\n\
         mac-only   Mac Agent        0.3.0    {mac:<w$}  -\n\
         npx-agent  Node Agent       2.1.0    {:<w$}  -\n",
        "DISTRIBUTION", "binary", "npx, uvx"
    );
    assert_eq!(out.stdout, expected);
    assert_eq!(
        out.stderr,
        "acp: 1 entries of the registry were left out: \"Bad/Id\": not a valid agent id\n"
    );

    // TEXT matches the id, the name or the description, ignoring case.
    let out = f.run(&["agents", "search", "NPM"]);
    assert_code(&out, 0);
    assert!(out.stdout.starts_with("ID "), "{}", out.stdout);
    assert_eq!(out.stdout.lines().count(), 2, "{}", out.stdout);
    assert!(out.stdout.contains("npx-agent"));
    let out = f.run(&["agents", "search", "mac agent"]);
    assert!(out.stdout.contains("mac-only"), "{}", out.stdout);
    let out = f.run(&["agents", "search", "nothing-like-it"]);
    assert_code(&out, 0);
    assert_eq!(
        out.stdout,
        "no agent of the registry matches \"nothing-like-it\"\n"
    );

    // JSON: one array, everything the registry says and what acp knows.
    let out = f.run(&["agents", "search", "--format", "json", "node"]);
    assert_code(&out, 0);
    let found: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        found,
        json!([{
            "id": "npx-agent", "name": "Node Agent", "version": "2.1.0",
            "description": "Runs from npm", "repository": "https://example.com/n",
            "website": null, "authors": [], "license": null,
            "distribution": ["npx", "uvx"], "platforms": [],
            "installable": ["npx", "uvx"], "added": null,
        }])
    );

    // Once added, search says so.
    assert_code(&f.run(&["agents", "add", "npx-agent"]), 0);
    let out = f.run(&["agents", "search", "--format", "json", "node"]);
    let found: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        found[0]["added"],
        json!({"version": "2.1.0", "distribution": "npx", "updateAvailable": false})
    );
    let out = f.run(&["agents", "search", "node"]);
    assert!(
        out.stdout
            .ends_with("npx-agent  Node Agent  2.1.0    npx, uvx      yes\n"),
        "{}",
        out.stdout
    );
}

// ---------------------------------------------------------------------------
// Add, run, remove.

#[test]
fn add_installs_a_binary_agent_that_exec_then_runs_and_remove_undoes_it() {
    let f = Fixture::new();
    let (entry, archive) = f.binary_agent("bin-agent", "1.0.0", Format::TarGz);
    f.publish(vec![entry]);
    // The user's config, with a comment, is kept.
    let config = f.sb.config_file();
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(
        &config,
        "# my agents\n[agents.mine]\ncommand = \"mine\" # mine\n",
    )
    .unwrap();

    let out = f.run(&["agents", "add", "bin-agent"]);
    assert_code(&out, 0);
    let dir = "$ROOT/home/.local/share/acp/agents/bin-agent/1.0.0";
    assert_eq!(
        out.stdout,
        format!(
            "added bin-agent 1.0.0 (binary) as [agents.bin-agent] in $ROOT/config/acp/config.toml\n  \
             installed into {dir} ({} bytes downloaded from $SERVER/dl/bin-agent-1.0.0.tar.gz)\n  \
             command: {dir}/agent-1.0.0/bin/agent --acp-flag (env: GREETING)\n  \
             run it: acp chat --agent bin-agent\n",
            archive.len()
        )
    );
    assert_eq!(out.stderr, "");
    let data = f.data().display().to_string();
    assert_eq!(
        read(&config),
        format!(
            "# my agents\n[agents.mine]\ncommand = \"mine\" # mine\n\n\
             [agents.bin-agent]\ncommand = \"{data}/agents/bin-agent/1.0.0/agent-1.0.0/bin/agent\"\n\
             args = [\"--acp-flag\"]\nenv = {{ GREETING = \"hi\" }}\n\
             registry = {{ version = \"1.0.0\", distribution = \"binary\" }}\n"
        )
    );
    assert_eq!(
        f.data_files(),
        [
            "agents/",
            "agents/.lock",
            "agents/bin-agent/",
            "agents/bin-agent/1.0.0/",
            "agents/bin-agent/1.0.0/agent-1.0.0/",
            "agents/bin-agent/1.0.0/agent-1.0.0/bin/",
            "agents/bin-agent/1.0.0/agent-1.0.0/bin/agent",
            "agents/bin-agent/1.0.0/agent-1.0.0/share/",
            "agents/bin-agent/1.0.0/agent-1.0.0/share/agent.mock",
        ]
    );

    // It runs by its id, with the registry's arguments and environment.
    let out = f.run(&["exec", "--agent", "bin-agent", "hello"]);
    assert_code(&out, 0);
    assert_eq!(out.stdout, "Hello from registry agent 1.0.0\n");

    // `acp agents` shows where it came from.
    let out = f.run(&["agents"]);
    assert_code(&out, 0);
    assert_eq!(
        out.stdout,
        format!(
            "bin-agent  {dir}/agent-1.0.0/bin/agent --acp-flag  [registry binary 1.0.0]\n\
             mine       mine\n"
        )
    );

    // Adding it again changes nothing.
    let before = read(&config);
    let out = f.run(&["agents", "add", "bin-agent"]);
    assert_code(&out, 0);
    assert_eq!(
        out.stdout,
        "bin-agent is already added (binary 1.0.0); acp agents update bin-agent moves it to \
         the newest version\n"
    );
    assert_eq!(read(&config), before);

    // Remove: the entry, then the files.
    let out = f.run(&["agents", "remove", "bin-agent"]);
    assert_code(&out, 0);
    assert_eq!(
        out.stdout,
        "removed bin-agent (binary 1.0.0): [agents.bin-agent] from $ROOT/config/acp/config.toml\n\
         removed $ROOT/home/.local/share/acp/agents/bin-agent\n"
    );
    assert_eq!(
        read(&config),
        "# my agents\n[agents.mine]\ncommand = \"mine\" # mine\n"
    );
    assert_eq!(f.data_files(), ["agents/", "agents/.lock"]);
    let out = f.run(&["agents", "remove", "bin-agent"]);
    assert_code(&out, 2);
    assert!(
        out.stderr.contains("no agent bin-agent in"),
        "{}",
        out.stderr
    );
    // An entry of the user's is not removed, nor replaced by add.
    let out = f.run(&["agents", "remove", "mine"]);
    assert_code(&out, 2);
    assert!(
        out.stderr.contains("was not added from the registry"),
        "{}",
        out.stderr
    );
}

#[test]
fn an_id_of_the_registry_that_is_not_added_is_never_downloaded_by_exec() {
    let f = Fixture::new();
    let (entry, _) = f.binary_agent("bin-agent", "1.0.0", Format::TarGz);
    f.publish(vec![entry]);
    // The cached registry is what exec reads.
    assert_code(&f.run(&["agents", "search"]), 0);
    let requests = f.server.requests().len();
    for args in [&["exec", "hello"][..], &["chat"]] {
        let out = f.run(&[&["--agent", "bin-agent"][..], args].concat());
        assert_code(&out, 127);
        assert_eq!(
            out.stderr,
            "acp: bin-agent is an agent of the ACP registry (Agent bin-agent 1.0.0) that is not \
             added yet: acp agents add bin-agent installs it (acp exec and acp chat never \
             download agents)\n"
        );
    }
    let out = f.run(&["exec", "--format", "json", "--agent", "bin-agent", "hello"]);
    assert_code(&out, 127);
    let line: Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(line["exitCode"], 127);
    // No request: not for the registry, not for the archive.
    assert_eq!(f.server.requests().len(), requests);
    assert!(!f.data().join("agents/bin-agent").exists());
}

#[test]
fn every_archive_format_installs_and_runs() {
    let f = Fixture::new();
    let formats = [
        ("tar-gz", Format::TarGz),
        ("tgz", Format::Tgz),
        ("tar-bz2", Format::TarBz2),
        ("zip", Format::Zip),
        ("raw", Format::Raw),
    ];
    let entries = formats
        .iter()
        .map(|(id, format)| f.binary_agent(id, "1.0.0", *format).0)
        .collect();
    f.publish(entries);
    for (id, _) in formats {
        let out = f.run(&["agents", "add", id]);
        assert_code(&out, 0);
        let out = f.run(&["exec", "--agent", id, "hello"]);
        assert_code(&out, 0);
        assert_eq!(out.stdout, "Hello from registry agent 1.0.0\n", "{id}");
    }
    // The raw binary is the command, made executable.
    use std::os::unix::fs::PermissionsExt;
    let raw = f.data().join("agents/raw/1.0.0/agent");
    let mode = std::fs::metadata(&raw).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o755);
}

#[test]
fn npx_and_uvx_agents_are_recorded_with_their_package() {
    let f = Fixture::new();
    f.publish(vec![
        json!({"id": "node-agent", "name": "Node", "version": "1.2.3", "description": "n",
               "distribution": {"npx": {"package": "@example/node-agent@1.2.3",
                                        "args": ["--acp"], "env": {"NODE_AGENT_MODE": "acp"}}}}),
        json!({"id": "py-agent", "name": "Py", "version": "0.5.0", "description": "p",
               "distribution": {"uvx": {"package": "py-agent==0.5.0", "cmd": "py-agent-acp"}}}),
        json!({"id": "both", "name": "Both", "version": "1.0.0", "description": "b",
               "distribution": {"npx": {"package": "both@1.0.0"},
                                "uvx": {"package": "both==1.0.0"}}}),
    ]);
    let out = f.run(&["agents", "add", "node-agent"]);
    assert_code(&out, 0);
    assert_eq!(
        out.stdout,
        "added node-agent 1.2.3 (npx) as [agents.node-agent] in $ROOT/config/acp/config.toml\n  \
         npx fetches @example/node-agent@1.2.3 when the agent starts\n  \
         command: npx -y @example/node-agent@1.2.3 --acp (env: NODE_AGENT_MODE)\n  \
         run it: acp chat --agent node-agent\n"
    );
    assert_code(&f.run(&["agents", "add", "py-agent"]), 0);
    // --distribution picks one of several.
    assert_code(
        &f.run(&["agents", "add", "both", "--distribution", "uvx"]),
        0,
    );
    assert_eq!(
        read(&f.sb.config_file()),
        "[agents.node-agent]\ncommand = \"npx\"\n\
         args = [\"-y\", \"@example/node-agent@1.2.3\", \"--acp\"]\n\
         env = { NODE_AGENT_MODE = \"acp\" }\n\
         registry = { version = \"1.2.3\", distribution = \"npx\" }\n\n\
         [agents.py-agent]\ncommand = \"uvx\"\nargs = [\"--from\", \"py-agent==0.5.0\", \"py-agent-acp\"]\n\
         registry = { version = \"0.5.0\", distribution = \"uvx\" }\n\n\
         [agents.both]\ncommand = \"uvx\"\nargs = [\"both==1.0.0\"]\n\
         registry = { version = \"1.0.0\", distribution = \"uvx\" }\n"
    );
    // Nothing was downloaded: only the registry was asked for.
    assert!(
        f.server
            .requests()
            .iter()
            .all(|r| r.path == "/registry.json"),
        "{:?}",
        f.server.requests()
    );
    assert!(!f.data().join("agents/node-agent").exists());
    // A kind the agent does not offer is refused, saying what it offers.
    assert_code(&f.run(&["agents", "remove", "py-agent"]), 0);
    let out = f.run(&["agents", "add", "py-agent", "--distribution", "npx"]);
    assert_code(&out, 2);
    assert_eq!(
        out.stderr,
        format!(
            "acp: py-agent 0.5.0 has no npx distribution for {}: it offers uvx\n",
            platform()
        )
    );
    let out = f.run(&["agents", "add", "no-such-agent"]);
    assert_code(&out, 2);
    assert_eq!(
        out.stderr,
        "acp: the registry ($SERVER/registry.json) has no agent no-such-agent; acp agents \
         search TEXT looks for one\n"
    );
}

// ---------------------------------------------------------------------------
// Update.

#[test]
fn update_moves_to_the_new_version_then_removes_the_old_one() {
    let f = Fixture::new();
    let (v1, _) = f.binary_agent("bin-agent", "1.0.0", Format::TarGz);
    f.publish(vec![
        v1,
        json!({"id": "node-agent", "name": "Node", "version": "1.0.0", "description": "n",
               "distribution": {"npx": {"package": "node-agent@1.0.0"}}}),
    ]);
    assert_code(&f.run(&["agents", "add", "bin-agent"]), 0);
    assert_code(&f.run(&["agents", "add", "node-agent"]), 0);
    let out = f.run(&["agents", "update"]);
    assert_code(&out, 0);
    assert_eq!(
        out.stdout,
        "bin-agent: up to date (1.0.0)\nnode-agent: up to date (1.0.0)\n"
    );

    let (v2, archive) = f.binary_agent("bin-agent", "2.0.0", Format::Zip);
    f.publish(vec![
        v2,
        json!({"id": "node-agent", "name": "Node", "version": "1.1.0", "description": "n",
               "distribution": {"npx": {"package": "node-agent@1.1.0"}}}),
    ]);
    // `acp agents` reads only the cache: the new version shows once the
    // registry was fetched again.
    let out = f.run(&["agents", "search", "bin"]);
    assert!(
        out.stdout.contains("1.0.0 (update: 2.0.0)"),
        "{}",
        out.stdout
    );
    let out = f.run(&["agents"]);
    let dir = "$ROOT/home/.local/share/acp/agents/bin-agent";
    assert_eq!(
        out.stdout,
        format!(
            "bin-agent   {dir}/1.0.0/agent-1.0.0/bin/agent --acp-flag  [registry binary 1.0.0; \
             2.0.0 is out: acp agents update bin-agent]\n\
             node-agent  npx -y node-agent@1.0.0  [registry npx 1.0.0; 1.1.0 is out: acp agents \
             update node-agent]\n"
        )
    );

    let out = f.run(&["agents", "update", "bin-agent"]);
    assert_code(&out, 0);
    assert_eq!(
        out.stdout,
        format!(
            "bin-agent: updated 1.0.0 → 2.0.0 (binary)\n  \
             installed into {dir}/2.0.0 ({} bytes downloaded from $SERVER/dl/bin-agent-2.0.0.zip)\n  \
             command: {dir}/2.0.0/agent-2.0.0/bin/agent --acp-flag (env: GREETING)\n  \
             removed {dir}/1.0.0\n",
            archive.len()
        )
    );
    let out = f.run(&["exec", "--agent", "bin-agent", "hello"]);
    assert_code(&out, 0);
    assert_eq!(out.stdout, "Hello from registry agent 2.0.0\n");
    assert!(!f.data().join("agents/bin-agent/1.0.0").exists());
    // The npx agent was left for `acp agents update` without an id.
    let out = f.run(&["agents", "update"]);
    assert_code(&out, 0);
    assert_eq!(
        out.stdout,
        "bin-agent: up to date (2.0.0)\nnode-agent: updated 1.0.0 → 1.1.0 (npx)\n  \
         npx fetches node-agent@1.1.0 when the agent starts\n  \
         command: npx -y node-agent@1.1.0\n"
    );
    assert!(read(&f.sb.config_file()).contains("args = [\"-y\", \"node-agent@1.1.0\"]"));
}

#[test]
fn a_failed_update_leaves_the_old_version_installed_and_used() {
    let f = Fixture::new();
    let (v1, _) = f.binary_agent("bin-agent", "1.0.0", Format::TarGz);
    f.publish(vec![v1]);
    assert_code(&f.run(&["agents", "add", "bin-agent"]), 0);
    let config = read(&f.sb.config_file());
    let installed = f.data_files();

    // The download is cut halfway.
    let (v2, archive) = f.binary_agent("bin-agent", "2.0.0", Format::TarGz);
    f.server.set(
        "/dl/bin-agent-2.0.0.tar.gz",
        Route {
            claimed_length: Some(archive.len() as u64),
            ..Route::ok(&archive[..archive.len() / 2])
        },
    );
    f.publish(vec![v2.clone()]);
    let out = f.run(&["agents", "update"]);
    assert_code(&out, 1);
    assert!(
        out.stdout.starts_with(
            "bin-agent: the update to 2.0.0 failed, 1.0.0 is still installed and used: cannot \
             fetch $SERVER/dl/bin-agent-2.0.0.tar.gz: "
        ),
        "{}",
        out.stdout
    );
    assert_eq!(read(&f.sb.config_file()), config);
    assert_eq!(f.data_files(), installed);
    let out = f.run(&["exec", "--agent", "bin-agent", "hello"]);
    assert_eq!(out.stdout, "Hello from registry agent 1.0.0\n");

    // The archive is not the one the registry's checksum names.
    let mut bad = v2.clone();
    bad["distribution"]["binary"][platform()]["sha256"] = json!("00".repeat(32));
    f.server
        .set("/dl/bin-agent-2.0.0.tar.gz", Route::ok(archive.clone()));
    f.publish(vec![bad]);
    let out = f.run(&["agents", "update"]);
    assert_code(&out, 1);
    assert!(
        out.stdout.contains("but the registry says 0000"),
        "{}",
        out.stdout
    );
    assert_eq!(read(&f.sb.config_file()), config);
    assert_eq!(f.data_files(), installed);

    // Its command is not in the archive.
    let mut bad = v2.clone();
    bad["distribution"]["binary"][platform()]["cmd"] = json!("./agent-2.0.0/bin/missing");
    f.publish(vec![bad]);
    let out = f.run(&["agents", "update"]);
    assert_code(&out, 1);
    assert!(
        out.stdout
            .contains("the registry's command \"./agent-2.0.0/bin/missing\" is not in the archive"),
        "{}",
        out.stdout
    );
    assert_eq!(read(&f.sb.config_file()), config);
    assert_eq!(f.data_files(), installed);

    // With the right archive and checksum, the update goes through.
    let mut good = v2;
    good["distribution"]["binary"][platform()]["sha256"] = json!(sha256_hex(&archive));
    f.publish(vec![good]);
    let out = f.run(&["agents", "update"]);
    assert_code(&out, 0);
    let out = f.run(&["exec", "--agent", "bin-agent", "hello"]);
    assert_eq!(out.stdout, "Hello from registry agent 2.0.0\n");
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

// ---------------------------------------------------------------------------
// Safety.

#[test]
fn unsafe_archives_are_refused_and_nothing_of_them_stays() {
    let f = Fixture::new();
    let outside = f.sb.root().join("outside");
    std::fs::create_dir(&outside).unwrap();
    let out_dir = outside.display().to_string();
    let evil = format!("{out_dir}/evil");
    let agent = || file("bin/agent", "#!/bin/sh\n", 0o755);
    let pwned = |name: &str| file(name, "pwned\n", 0o644);
    // (id, archive, what the refusal names)
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "absolute",
            gzip(&tar(&[agent(), pwned(&evil)])),
            "is an absolute path",
        ),
        (
            "dotdot",
            gzip(&tar(&[agent(), pwned("bin/../../../../outside/evil")])),
            "is a path with a `..` component",
        ),
        (
            "link-absolute",
            gzip(&tar(&[agent(), symlink("out", &out_dir)])),
            "is a link leading outside the install directory (an absolute link)",
        ),
        (
            "link-up",
            gzip(&tar(&[agent(), symlink("bin/out", "../../../outside")])),
            "is a link leading outside the install directory",
        ),
        (
            // `here` is the directory itself, so `here/..` is its parent,
            // whatever `..` looks like written.
            "link-through-link",
            gzip(&tar(&[
                agent(),
                symlink("escape", "here/.."),
                symlink("here", "."),
            ])),
            "\"escape\" is a link leading outside the install directory",
        ),
        (
            "write-through-link",
            gzip(&tar(&[
                agent(),
                symlink("bin/dir", "."),
                pwned("bin/dir/evil"),
            ])),
            "is written through a link",
        ),
        (
            "hardlink-out",
            gzip(&tar(&[
                agent(),
                Member::HardLink("bin/h".into(), evil.clone()),
            ])),
            "is a hard link to an absolute path",
        ),
        (
            "device",
            gzip(&tar(&[agent(), Member::CharDevice("bin/null".into())])),
            "is a device file",
        ),
        (
            "fifo",
            bzip2(&tar(&[agent(), Member::Fifo("bin/pipe".into())])),
            "is a FIFO",
        ),
        (
            "zip-dotdot",
            zip(&[agent(), pwned("../../outside/evil")]),
            "is a path with a `..` component",
        ),
        (
            "zip-absolute",
            zip(&[agent(), pwned(&evil)]),
            "is an absolute path",
        ),
        (
            "zip-link",
            zip(&[agent(), symlink("bin/out", "../../outside")]),
            "is a link leading outside the install directory",
        ),
    ];
    let entries = cases
        .iter()
        .map(|(id, bytes, _)| {
            let name = if id.starts_with("zip") {
                format!("{id}.zip")
            } else if *id == "fifo" {
                format!("{id}.tar.bz2")
            } else {
                format!("{id}.tar.gz")
            };
            f.agent_with_archive(id, &name, bytes.clone(), "./bin/agent")
        })
        .collect();
    f.publish(entries);
    for (id, _, why) in &cases {
        let out = f.run(&["agents", "add", id]);
        assert_code(&out, 1);
        assert!(
            out.stderr
                .starts_with("acp: refused the archive: its member")
                && out.stderr.contains(why)
                && out.stderr.ends_with("; nothing of it was kept\n"),
            "{id}: {}",
            out.stderr
        );
        assert_eq!(f.data_files(), ["agents/", "agents/.lock"], "{id}");
        assert!(files_under(&outside).is_empty(), "{id}");
        assert!(!f.sb.config_file().exists(), "{id}");
    }
    assert!(!f.sb.root().join("evil").exists());
}

#[test]
fn only_https_or_loopback_http_is_fetched() {
    let f = Fixture::new();
    // An archive on plain HTTP elsewhere: refused before any connection.
    f.publish(vec![json!({
        "id": "plain", "name": "Plain", "version": "1.0.0", "description": "p",
        "distribution": {"binary": {platform(): {
            "archive": "http://example.invalid/agent.tar.gz", "cmd": "./agent"}}}
    })]);
    let out = f.run(&["agents", "add", "plain"]);
    assert_code(&out, 1);
    assert_eq!(
        out.stderr,
        "acp: refused URL http://example.invalid/agent.tar.gz: plain HTTP is allowed only to a \
         loopback address; use https://\n"
    );
    // A redirect from loopback to plain HTTP elsewhere: not followed.
    f.server.set(
        "/dl/redirect.tar.gz",
        Route {
            status: 302,
            headers: vec!["Location: http://example.invalid/agent.tar.gz".into()],
            ..Route::default()
        },
    );
    f.publish(vec![json!({
        "id": "redirected", "name": "R", "version": "1.0.0", "description": "r",
        "distribution": {"binary": {platform(): {
            "archive": f.server.url("/dl/redirect.tar.gz"), "cmd": "./agent"}}}
    })]);
    let out = f.run(&["agents", "add", "redirected"]);
    assert_code(&out, 1);
    assert!(
        out.stderr.contains(
            "redirected to http://example.invalid/agent.tar.gz: plain HTTP is allowed only to a \
             loopback address"
        ),
        "{}",
        out.stderr
    );
    assert_eq!(f.data_files(), ["agents/", "agents/.lock"]);
    // A registry URL on plain HTTP elsewhere.
    let sb = Sandbox::new().env("ACP_REGISTRY_URL", "http://example.invalid/registry.json");
    let out = sb.run(&["agents", "search"]);
    assert_code(&out, 1);
    assert!(
        out.stderr
            .starts_with("acp: refused URL http://example.invalid/registry.json: plain HTTP"),
        "{}",
        out.stderr
    );
}

#[test]
fn downloads_over_the_size_cap_or_cut_short_leave_nothing() {
    let f = Fixture::new();
    let (entry, archive) = f.binary_agent("bin-agent", "1.0.0", Format::TarGz);
    f.publish(vec![entry]);
    // A server announcing more than acp downloads (1 GiB) is not read.
    f.server.set(
        "/dl/bin-agent-1.0.0.tar.gz",
        Route {
            claimed_length: Some(2 << 30),
            ..Route::ok(archive.clone())
        },
    );
    let out = f.run(&["agents", "add", "bin-agent"]);
    assert_code(&out, 1);
    assert_eq!(
        out.stderr,
        "acp: $SERVER/dl/bin-agent-1.0.0.tar.gz is larger than acp downloads (1024 MiB); \
         nothing was kept\n"
    );
    assert_eq!(f.data_files(), ["agents/", "agents/.lock"]);
    // A download cut halfway.
    f.server.set(
        "/dl/bin-agent-1.0.0.tar.gz",
        Route {
            claimed_length: Some(archive.len() as u64),
            ..Route::ok(&archive[..archive.len() / 2])
        },
    );
    let out = f.run(&["agents", "add", "bin-agent"]);
    assert_code(&out, 1);
    assert!(
        out.stderr
            .starts_with("acp: cannot fetch $SERVER/dl/bin-agent-1.0.0.tar.gz: "),
        "{}",
        out.stderr
    );
    assert_eq!(f.data_files(), ["agents/", "agents/.lock"]);
    assert!(!f.sb.config_file().exists());
    // An HTTP error.
    f.server.set(
        "/dl/bin-agent-1.0.0.tar.gz",
        Route {
            status: 500,
            ..Route::default()
        },
    );
    let out = f.run(&["agents", "add", "bin-agent"]);
    assert_code(&out, 1);
    assert_eq!(
        out.stderr,
        "acp: $SERVER/dl/bin-agent-1.0.0.tar.gz answered HTTP 500\n"
    );
    assert_eq!(f.data_files(), ["agents/", "agents/.lock"]);
}

#[test]
fn two_adds_at_once_take_turns() {
    let f = Fixture::new();
    let (entry, archive) = f.binary_agent("bin-agent", "1.0.0", Format::TarGz);
    f.publish(vec![entry]);
    let gate = Gate::default();
    f.server.set(
        "/dl/bin-agent-1.0.0.tar.gz",
        Route {
            gate: Some(gate.clone()),
            ..Route::ok(archive)
        },
    );
    // The first holds the lock while its download is held.
    let first =
        f.sb.command(&["agents", "add", "bin-agent"])
            .spawn()
            .unwrap();
    f.server.wait_for("/dl/bin-agent-1.0.0.tar.gz");
    let mut second =
        f.sb.command(&["agents", "add", "bin-agent"])
            .spawn()
            .unwrap();
    // The second says it waits.
    let mut stderr = BufReader::new(second.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    assert_eq!(
        line,
        "acp: another acp is adding, updating or removing agents; waiting for it\n"
    );
    gate.open();
    let first = f.sb.output(first.wait_with_output().unwrap());
    assert_code(&first, 0);
    assert!(
        first.stdout.starts_with("added bin-agent 1.0.0"),
        "{}",
        first.stdout
    );
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    let second = f.sb.output(second.wait_with_output().unwrap());
    assert_code(&second, 0);
    assert_eq!(rest, "");
    assert_eq!(
        second.stdout,
        "bin-agent is already added (binary 1.0.0); acp agents update bin-agent moves it to \
         the newest version\n"
    );
    assert_eq!(
        read(&f.sb.config_file())
            .matches("[agents.bin-agent]")
            .count(),
        1
    );
    // One download, one install.
    let downloads = f
        .server
        .requests()
        .iter()
        .filter(|r| r.path.starts_with("/dl/"))
        .count();
    assert_eq!(downloads, 1);
    assert!(
        f.data_files().iter().all(|p| !p.contains(".tmp-")),
        "{:?}",
        f.data_files()
    );
    let out = f.run(&["exec", "--agent", "bin-agent", "hello"]);
    assert_eq!(out.stdout, "Hello from registry agent 1.0.0\n");
}

#[test]
fn a_killed_add_leaves_no_install_and_the_next_one_cleans_up() {
    let f = Fixture::new();
    let (entry, archive) = f.binary_agent("bin-agent", "1.0.0", Format::TarGz);
    f.publish(vec![entry]);
    let gate = Gate::default();
    f.server.set(
        "/dl/bin-agent-1.0.0.tar.gz",
        Route {
            gate: Some(gate.clone()),
            ..Route::ok(archive.clone())
        },
    );
    let mut add =
        f.sb.command(&["agents", "add", "bin-agent"])
            .spawn()
            .unwrap();
    f.server.wait_for("/dl/bin-agent-1.0.0.tar.gz");
    add.kill().unwrap();
    add.wait().unwrap();
    gate.open();
    // What it left: its temporary directory, no version, no config entry.
    let left = f.data_files();
    assert!(
        left.iter().any(|p| p.starts_with("agents/bin-agent/.tmp-")),
        "{left:?}"
    );
    assert!(!left.iter().any(|p| p.starts_with("agents/bin-agent/1.0.0")));
    assert!(!f.sb.config_file().exists());
    let out = f.run(&["exec", "--agent", "bin-agent", "hello"]);
    assert_code(&out, 127);
    // The next add installs, and removes what the killed one left.
    f.server
        .set("/dl/bin-agent-1.0.0.tar.gz", Route::ok(archive));
    assert_code(&f.run(&["agents", "add", "bin-agent"]), 0);
    assert!(
        !f.data_files().iter().any(|p| p.contains(".tmp-")),
        "{:?}",
        f.data_files()
    );
    let out = f.run(&["exec", "--agent", "bin-agent", "hello"]);
    assert_eq!(out.stdout, "Hello from registry agent 1.0.0\n");
}

// ---------------------------------------------------------------------------
// The registry's URL, the cache.

#[test]
fn an_unreachable_registry_is_an_error_naming_the_url() {
    // A port nobody listens on.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/registry.json");
    let sb = Sandbox::new().env("ACP_REGISTRY_URL", &url);
    for args in [
        &["agents", "search"][..],
        &["agents", "add", "some-agent"],
        &["agents", "update"],
    ] {
        let out = sb.run(args);
        assert_code(&out, 1);
        assert!(
            out.stderr
                .starts_with(&format!("acp: cannot fetch {url}: ")),
            "{args:?}: {}",
            out.stderr
        );
        assert!(
            out.stderr.ends_with(&format!(
                "\nacp has no cached copy of the registry at {url} either. (Another registry: \
                 set ACP_REGISTRY_URL or registry_url in the config file.)\n"
            )),
            "{}",
            out.stderr
        );
    }
    // Not the registry format.
    let f = Fixture::new();
    f.server
        .set("/registry.json", Route::ok("<html>not here</html>"));
    let out = f.run(&["agents", "search"]);
    assert_code(&out, 1);
    assert!(
        out.stderr
            .starts_with("acp: $SERVER/registry.json is not an ACP registry: "),
        "{}",
        out.stderr
    );
}

#[test]
fn the_registry_is_cached_revalidated_with_its_etag_and_used_offline_with_its_age() {
    let f = Fixture::new();
    let (entry, _) = f.binary_agent("bin-agent", "1.0.0", Format::TarGz);
    f.publish(vec![entry]);
    assert_code(&f.run(&["agents", "search"]), 0);
    let first = f.server.requests();
    assert_eq!(first.last().unwrap().if_none_match, None);
    // Again: a conditional request, answered 304, and the cached copy used.
    let out = f.run(&["agents", "search"]);
    assert_code(&out, 0);
    assert!(out.stdout.contains("bin-agent"));
    assert_eq!(out.stderr, "");
    let etag = f.server.requests().last().unwrap().if_none_match.clone();
    assert!(etag.is_some_and(|e| e.starts_with('"')));
    let cache = f.sb.dir.path().join("home/.cache/acp/registry");
    assert_eq!(files_under(&cache).len(), 1, "{:?}", files_under(&cache));

    // A registry that answers with an error: the cache, saying why.
    f.server.set(
        "/registry.json",
        Route {
            status: 503,
            ..Route::default()
        },
    );
    let out = f.run(&["agents", "search"]);
    assert_code(&out, 0);
    assert!(out.stdout.contains("bin-agent"), "{}", out.stdout);
    assert!(
        out.stderr
            .starts_with("acp: using the copy of the registry cached ")
            && out
                .stderr
                .ends_with(" ago ($SERVER/registry.json answered HTTP 503)\n"),
        "{}",
        out.stderr
    );

    // The registry gone: the cache, with a note saying how old it is.
    let Fixture { sb, server, .. } = f;
    let base = server.base();
    drop(server);
    let out = sb.run(&["agents", "search"]);
    assert_code(&out, 0);
    assert!(out.stdout.contains("bin-agent"), "{}", out.stdout);
    let note = out.stderr.replace(&base, "$SERVER");
    assert!(
        note.starts_with("acp: using the copy of the registry cached ")
            && note.contains(" ago (cannot fetch $SERVER/registry.json: "),
        "{note}"
    );
}

#[test]
fn the_registry_url_comes_from_the_environment_or_the_config() {
    let f = Fixture::new();
    f.publish(vec![
        json!({"id": "node-agent", "name": "Node", "version": "1.0.0",
        "description": "n", "distribution": {"npx": {"package": "node-agent@1.0.0"}}}),
    ]);
    // The config's key, without the variable.
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.config_file().parent().unwrap()).unwrap();
    std::fs::write(
        sb.config_file(),
        format!("registry_url = \"{}\"\n", f.server.url("/registry.json")),
    )
    .unwrap();
    let out = sb.run(&["agents", "search"]);
    assert_code(&out, 0);
    assert!(out.stdout.contains("node-agent"), "{}", out.stdout);
    // The variable wins over the key.
    let other = Server::start();
    other.set(
        "/other.json",
        Route::ok(
            json!({"version": "1.0.0", "agents": [{"id": "other-agent", "name": "O",
                "version": "1.0.0", "description": "o",
                "distribution": {"uvx": {"package": "o"}}}]})
            .to_string(),
        ),
    );
    let sb = sb.env("ACP_REGISTRY_URL", &other.url("/other.json"));
    let out = sb.run(&["agents", "search"]);
    assert_code(&out, 0);
    assert!(out.stdout.contains("other-agent"), "{}", out.stdout);
    assert!(!out.stdout.contains("node-agent"), "{}", out.stdout);
}
