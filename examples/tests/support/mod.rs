//! What the tests that run the built examples share: where the binaries are, and a command
//! with the provider environment cleared so every example runs offline.

use std::path::PathBuf;
use std::process::Command;

/// `target/<profile>/examples/<name>`, next to the running test's `deps` directory, or a
/// panic saying how to build it.
///
/// The tests do not build the examples themselves: a cargo started from a test would be a
/// second build, with its own flags, in the middle of the test run. Plain
/// `cargo test -p hpd-agent-examples` (and `cargo test --workspace`) builds every example
/// before running the tests; with a target filter such as `--test demo` cargo builds only
/// that target, and an older example binary would be run.
pub fn example_binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test knows its own path");
    let profile_dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("the test runs from target/<profile>/deps");
    let path = profile_dir
        .join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.is_file(),
        "{} is missing: run `cargo test -p hpd-agent-examples`, which builds the examples, or \
         `cargo build -p hpd-agent-examples --example {name}` before a `--test` filter",
        path.display()
    );
    path
}

/// A command running the example `name`, with every variable that could select a real
/// provider removed (`HPD_PROVIDER`, `OPENAI_*`, `ANTHROPIC_*`, `*_API_KEY`, `*_BASE_URL`).
pub fn offline_command(name: &str) -> Command {
    let mut command = Command::new(example_binary(name));
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy();
        let provider = key == "HPD_PROVIDER"
            || key.starts_with("OPENAI_")
            || key.starts_with("ANTHROPIC_")
            || key.ends_with("_API_KEY")
            || key.ends_with("_BASE_URL");
        if provider {
            command.env_remove(&*key);
        }
    }
    command
}
