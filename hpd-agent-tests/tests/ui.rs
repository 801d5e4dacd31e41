//! Compile tests of the macros: `ui/<topic>/<what-is-wrong>.rs` with its `.stderr`, one mistake
//! per file, and `ui/pass/` for what must compile (and run). Re-bless with
//! `TRYBUILD=overwrite cargo test -p hpd-agent-tests --test ui` and review the diff like code.
//!
//! The `.stderr` snapshots hold rustc's exact output, which changes between compiler releases.
//! They are pinned to the toolchain the machines have, rustc 1.95 (the workspace's
//! `rust-version`); `toolchain_is_the_pinned_one` fails loudly when the compiler changes, so the
//! snapshots never drift or get skipped silently.

const PINNED: &str = "rustc 1.95.";

const TOPICS: &[&str] = &[
    "harness_args",
    "function_args",
    "names",
    "impl_shape",
    "receiver",
    "params",
    "metadata",
    "construct",
    "sub_agent",
];

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.pass("tests/ui/pass/*.rs");
    for topic in TOPICS {
        cases.compile_fail(format!("tests/ui/{topic}/*.rs"));
    }
}

#[test]
fn every_ui_folder_is_run() {
    let mut folders: Vec<String> =
        std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/ui"))
            .expect("tests/ui exists")
            .map(|entry| {
                entry
                    .expect("readable")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .filter(|name| name != "pass")
            .collect();
    folders.sort();
    let mut expected: Vec<String> = TOPICS.iter().map(|t| (*t).to_owned()).collect();
    expected.sort();
    assert_eq!(folders, expected, "add new tests/ui folders to TOPICS");
}

#[test]
fn toolchain_is_the_pinned_one() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let output = std::process::Command::new(&rustc)
        .arg("--version")
        .output()
        .expect("rustc runs");
    let version = String::from_utf8_lossy(&output.stdout);
    assert!(
        version.starts_with(PINNED),
        "the ui snapshots are pinned to {PINNED}x but the compiler is `{}`; re-bless them with \
         TRYBUILD=overwrite on the new toolchain, review the diff, then update PINNED",
        version.trim()
    );
}
