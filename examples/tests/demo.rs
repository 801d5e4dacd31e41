//! Runs the built `demo` example offline and checks its trace: the scripted-model line, one
//! token line per request with fewer tokens than the flat list, the recovery, the error result,
//! the answer and the summary, and colours only when asked for.
//!
//! The test runs the binary `target/<profile>/examples/demo` and does not build it: a cargo
//! started from a test would be a second build, with its own flags, in the middle of the test
//! run. Plain `cargo test -p hpd-agent-examples` (and `cargo test --workspace`) builds the
//! examples before running the tests. With a target filter such as `--test demo` cargo builds
//! only that target (and an older demo binary would be tested), so build the example first:
//!
//! ```text
//! cargo build -p hpd-agent-examples --example demo && cargo test -p hpd-agent-examples --test demo
//! ```

mod support;

/// Runs the demo offline with stdout piped, `colour` variables set as given; its stdout.
fn run_demo(colour: &[(&str, &str)]) -> String {
    let mut command = support::offline_command("demo");
    command.env_remove("NO_COLOR").env_remove("CLICOLOR_FORCE");
    command.envs(colour.iter().copied());
    let output = command.output().expect("the demo starts");
    let stdout = String::from_utf8(output.stdout).expect("the demo prints UTF-8");
    assert!(
        output.status.success(),
        "the demo failed ({}):\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// The text of the line whose label (after the two-space indent) is `label`.
fn labelled<'a>(lines: &[&'a str], label: &str) -> Vec<&'a str> {
    lines
        .iter()
        .filter_map(|line| {
            let rest = line.strip_prefix("  ")?.strip_prefix(label)?;
            rest.starts_with(' ').then(|| rest.trim())
        })
        .collect()
}

/// The number right after `prefix` in `text`.
fn number_after(text: &str, prefix: &str) -> usize {
    let start = text
        .find(prefix)
        .unwrap_or_else(|| panic!("no '{prefix}' in '{text}'"))
        + prefix.len();
    let digits: String = text[start..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits
        .parse()
        .unwrap_or_else(|_| panic!("no number after '{prefix}' in '{text}'"))
}

#[test]
fn offline_trace_shows_what_collapsing_saves() {
    let out = run_demo(&[("NO_COLOR", "1")]);
    assert!(
        !out.contains('\x1b'),
        "ANSI escapes in piped output:\n{out}"
    );
    let lines: Vec<&str> = out.lines().collect();
    for line in &lines {
        assert!(
            line.chars().count() < 100,
            "line of {} chars: {line}",
            line.chars().count()
        );
    }
    assert!(
        lines.contains(
            &"A scripted model plays the conversation: no API key needed (set OPENAI_API_KEY for a real model)"
        ),
        "{out}"
    );

    let requests: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.starts_with("── request "))
        .collect();
    assert_eq!(requests.len(), 6, "{out}");
    for (i, header) in requests.iter().enumerate() {
        assert_eq!(number_after(header, "── request "), i + 1, "{header}");
    }

    // The first request carries the plain tool and one container per collapsed harness.
    assert_eq!(
        labelled(&lines, "tools")[0],
        "get_weather, call_function",
        "{out}"
    );
    // The default layout, `native`, is `fixed` on the demo's client: the same tool list on
    // every request.
    assert!(
        labelled(&lines, "tools")
            .iter()
            .all(|t| *t == "get_weather, call_function"),
        "{out}"
    );
    assert!(
        labelled(&lines, "layout")[0].starts_with("fixed (native, the default, on a client"),
        "{out}"
    );
    assert_eq!(
        labelled(&lines, "containers")[0],
        "MathTools, FileTools, Calendar, Inventory",
        "{out}"
    );
    assert_eq!(labelled(&lines, "instructions")[0], "none", "{out}");
    assert!(
        labelled(&lines, "instructions")[1].starts_with("Inventory: Quote SKUs exactly."),
        "{out}"
    );

    let tokens = labelled(&lines, "tokens");
    assert_eq!(tokens.len(), requests.len(), "{out}");
    let mut sent_total = 0;
    let mut flat = None;
    for line in &tokens {
        let sent = number_after(line, "");
        let flat_tokens = number_after(line, " vs ");
        assert!(sent < flat_tokens, "not fewer than flat: {line}");
        assert!(line.ends_with("% saved"), "{line}");
        assert!(
            flat.is_none_or(|f| f == flat_tokens),
            "flat cost changed: {line}"
        );
        flat = Some(flat_tokens);
        sent_total += sent;
    }
    assert!(
        number_after(tokens[0], "") * 2 < flat.unwrap_or_default(),
        "the first request saves less than half: {}",
        tokens[0]
    );

    let recovery = labelled(&lines, "recovery");
    assert_eq!(
        recovery,
        ["multiply is hidden in MathTools: the runtime expanded it; the model calls again"],
        "{out}"
    );
    assert!(
        labelled(&lines, "expanded")
            .iter()
            .any(|l| l.starts_with("Inventory:")),
        "{out}"
    );
    let errors = labelled(&lines, "error");
    assert_eq!(errors.len(), 1, "{out}");
    assert!(
        errors[0].starts_with("Invalid arguments for 'multiply'"),
        "{out}"
    );
    assert!(labelled(&lines, "result").contains(&"9800"), "{out}");

    let answer = labelled(&lines, "answer");
    assert_eq!(answer.len(), 1, "{out}");
    assert!(answer[0].starts_with("It is sunny in Oslo."), "{out}");
    assert!(out.contains("98.00 EUR."), "{out}");

    let summary = labelled(&lines, "summary");
    assert_eq!(summary.len(), 1, "{out}");
    assert_eq!(number_after(summary[0], ""), requests.len(), "{out}");
    assert_eq!(number_after(summary[0], "tools sent "), sent_total, "{out}");
    assert_eq!(
        number_after(summary[0], " vs "),
        requests.len() * flat.unwrap_or_default(),
        "{out}"
    );
}

/// `text` without its ANSI SGR sequences (`ESC [ ... m`).
fn strip_sgr(text: &str) -> String {
    let mut plain = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for c in chars.by_ref() {
                if c == 'm' {
                    break;
                }
            }
        } else {
            plain.push(c);
        }
    }
    plain
}

#[test]
fn clicolor_force_colours_a_pipe_with_the_same_text() {
    let coloured = run_demo(&[("CLICOLOR_FORCE", "1")]);
    assert!(coloured.contains("\x1b[1;36m── request 1"), "{coloured}");
    assert_eq!(strip_sgr(&coloured), run_demo(&[("NO_COLOR", "1")]));
    // An empty NO_COLOR does not count as set.
    assert!(run_demo(&[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "")]).contains('\x1b'));
}

#[test]
fn no_color_wins_over_clicolor_force_and_zero_forces_nothing() {
    let out = run_demo(&[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]);
    assert!(!out.contains('\x1b'), "{out}");
    let out = run_demo(&[("CLICOLOR_FORCE", "0")]);
    assert!(!out.contains('\x1b'), "{out}");
}
