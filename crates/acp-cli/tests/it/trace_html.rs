//! `acp trace --html`: the page is self-contained and escapes what the
//! recording says, and in a real headless Chromium its script runs (under
//! the page's Content-Security-Policy), the search box filters the rows,
//! and a screenshot shows the timeline: turn rows, error rows, duration bars.
//!
//! Chromium is Debian's `chromium` package (`.ci/run` installs it). Without
//! it this test prints one loud line and passes, unless
//! `ACP_BROWSER=require` is set: then it fails.

use crate::common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/session.jsonl")
}

/// The Chromium to use: `ACP_CHROMIUM`, else the first of the usual names
/// on PATH.
fn find_chromium() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("ACP_CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome", "chrome"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
        .find(|candidate| candidate.is_file())
}

fn chromium_or_skip() -> Option<PathBuf> {
    let found = find_chromium();
    let required = std::env::var("ACP_BROWSER").is_ok_and(|v| v == "require");
    match (found, required) {
        (Some(path), _) => Some(path),
        (None, true) => panic!(
            "ACP_BROWSER=require, but no Chromium was found (install Debian's chromium, or set ACP_CHROMIUM)"
        ),
        (None, false) => {
            // Straight to fd 2: the test harness does not capture it, so
            // the line shows even when the test passes.
            let _ = std::io::Write::write_all(
                &mut std::io::stderr(),
                b"!!!!! SKIPPED the headless-browser test of acp trace --html: no chromium on PATH \
                  (apt-get install chromium; ACP_BROWSER=require makes this a failure) !!!!!\n",
            );
            None
        }
    }
}

/// Runs headless Chromium on `url` with `args`, a fresh profile, and a
/// 90 s limit; returns its standard output.
fn chromium(browser: &Path, home: &Path, url: &str, args: &[&str]) -> String {
    let profile = tempfile::tempdir().unwrap();
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .arg(url)
        .env("HOME", home)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut text).map(|_| text)
    });
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "chromium failed: {status}");
            break;
        }
        if started.elapsed() > Duration::from_secs(90) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within 90 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    reader.join().unwrap().unwrap()
}

fn page(sb: &Sandbox) -> PathBuf {
    let out_path = sb.root().join("trace.html");
    let out = sb.run(&[
        "trace",
        fixture().to_str().unwrap(),
        "--html",
        out_path.to_str().unwrap(),
    ]);
    assert_code(&out, 0);
    assert_eq!(out.stderr, "acp trace: wrote $ROOT/trace.html\n");
    out_path
}

#[test]
fn the_page_is_self_contained_and_escapes_the_recording() {
    let sb = Sandbox::new();
    let html = std::fs::read_to_string(page(&sb)).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("Content-Security-Policy\" content=\"default-src 'none';"));
    for outside in ["http:", "https:", "src=", "href=", "@import", "url("] {
        assert!(
            !html.contains(outside),
            "the page refers to something outside: {outside}"
        );
    }
    // The prompt "and <b>again</b>" is text, not markup.
    assert!(html.contains("and &lt;b&gt;again&lt;/b&gt;"));
    assert!(!html.contains("<b>again"));
    assert_eq!(html.matches("<li ").count(), 27, "one row per shown event");
}

#[test]
fn in_headless_chromium_the_search_filters_and_the_timeline_shows() {
    let Some(browser) = chromium_or_skip() else {
        return;
    };
    let sb = Sandbox::new();
    let page = page(&sb);
    let home = sb.root().join("home");
    let url = format!("file://{}", page.display());

    // The script ran (the policy's hash is right) and counted every row.
    let dom = chromium(&browser, &home, &url, &["--dump-dom"]);
    assert!(
        dom.contains("data-ready=\"yes\""),
        "the page's script did not run:\n{dom}"
    );
    assert!(
        dom.contains("<span id=\"shown\">27 of 27 rows</span>"),
        "{dom}"
    );
    assert_eq!(dom.matches(" hidden=\"\"").count(), 0);

    // A search from the address: only the matching rows stay.
    let dom = chromium(
        &browser,
        &home,
        &format!("{url}#q=permission"),
        &["--dump-dom"],
    );
    assert!(
        dom.contains("<span id=\"shown\">2 of 27 rows</span>"),
        "{dom}"
    );
    assert_eq!(dom.matches(" hidden=\"\"").count(), 25);
    let visible: Vec<&str> = dom
        .split("<li ")
        .skip(1)
        .filter(|row| !row.split('>').next().unwrap_or_default().contains("hidden"))
        .collect();
    assert_eq!(visible.len(), 2);
    assert!(
        visible.iter().all(|row| row.contains("request_permission")),
        "{visible:?}"
    );

    // The screenshot shows turn rows, error rows and duration bars.
    let shot = sb.root().join("trace.png");
    chromium(
        &browser,
        &home,
        &url,
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1280,1100",
        ],
    );
    if let Some(keep) = std::env::var_os("ACP_KEEP_SCREENSHOT") {
        std::fs::copy(&shot, keep).unwrap();
    }
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&shot).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut pixels).unwrap();
    assert_eq!((info.width, info.height), (1280, 1100));
    let channels = info.color_type.samples();
    let count = |rgb: [u8; 3]| {
        pixels[..info.buffer_size()]
            .chunks(channels)
            .filter(|p| p[..3] == rgb)
            .count()
    };
    let error_rows = count([0xfd, 0xe2, 0xe2]);
    let turn_rows = count([0xe6, 0xf0, 0xff]);
    let bars = count([0x3b, 0x7d, 0xdd]);
    // Rows are about 20 px high and most of 1248 px wide.
    assert!(
        error_rows > 4 * 20 * 1000,
        "error rows: {error_rows} pixels"
    );
    assert!(turn_rows > 2 * 15 * 1000, "turn rows: {turn_rows} pixels");
    assert!(bars > 2 * 8 * 100, "duration bars: {bars} pixels");
}
