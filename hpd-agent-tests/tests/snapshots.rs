//! Expansion snapshots: what the impl macros write, readable without `cargo expand`.
//!
//! Each `snapshots/<case>.in.rs` is one annotated impl block. The test runs the macro crate's
//! `expand::harness` on it, formats the output with `prettyplease` and compares it with
//! `snapshots/<case>.out.rs`. Re-bless with `HPD_BLESS=1 cargo test -p hpd-agent-tests --test
//! snapshots` and review the diff like code.
//!
//! A proc-macro crate can export nothing but macros, so the macro crate's modules are compiled
//! into this test with `#[path]`. They only use `proc_macro2`, `syn` and `quote` (dev-dependencies
//! here), never `proc_macro`, which is what makes this possible. Their `#[cfg(test)]` unit tests
//! come along and run here too.

use std::path::Path;

use proc_macro2::TokenStream;
use quote::ToTokens;

#[path = "../../hpd-agent-macros/src/args.rs"]
mod args;
#[path = "../../hpd-agent-macros/src/ast.rs"]
mod ast;
#[path = "../../hpd-agent-macros/src/errors.rs"]
mod errors;
#[path = "../../hpd-agent-macros/src/expand/mod.rs"]
mod expand;
// `ai_function_outside_harness` is only called by the macro crate's entry point.
#[allow(dead_code)]
#[path = "../../hpd-agent-macros/src/fallback.rs"]
mod fallback;
#[path = "../../hpd-agent-macros/src/user_item.rs"]
mod user_item;
#[path = "../../hpd-agent-macros/src/valid.rs"]
mod valid;

fn expand_case(source: &str) -> String {
    let mut item: syn::ItemImpl = syn::parse_str(source).expect("the input is an impl block");
    let attr = item.attrs.remove(0);
    let kind = match attr.path().get_ident().map(ToString::to_string).as_deref() {
        Some("tool_harness") => args::Kind::Plain,
        Some("collapse") => args::Kind::Collapse,
        other => panic!("the first attribute must be the harness attribute, found {other:?}"),
    };
    let args = match &attr.meta {
        syn::Meta::List(list) => list.tokens.clone(),
        _ => TokenStream::new(),
    };
    let output = expand::harness(kind, args, item.to_token_stream());
    let file: syn::File = syn::parse2(output).expect("the expansion parses as a file");
    prettyplease::unparse(&file)
}

fn check(case: &str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("snapshots");
    let input = std::fs::read_to_string(dir.join(format!("{case}.in.rs"))).expect("input exists");
    let actual = expand_case(&input);
    let out = dir.join(format!("{case}.out.rs"));
    if std::env::var_os("HPD_BLESS").is_some() {
        std::fs::write(&out, &actual).expect("snapshot written");
        return;
    }
    let expected = std::fs::read_to_string(&out).unwrap_or_default();
    if expected != actual {
        let diff: Vec<String> = expected
            .lines()
            .zip(actual.lines())
            .enumerate()
            .filter(|(_, (e, a))| e != a)
            .take(5)
            .map(|(i, (e, a))| format!("line {}:\n  expected: {e}\n  actual:   {a}", i + 1))
            .collect();
        panic!(
            "expansion of snapshots/{case}.in.rs changed ({} vs {} lines); first differences:\n{}\n\
             re-bless with HPD_BLESS=1 and review the diff",
            expected.lines().count(),
            actual.lines().count(),
            diff.join("\n")
        );
    }
}

#[test]
fn plain_harness() {
    check("plain");
}

#[test]
fn collapsed_harness() {
    check("collapsed");
}

#[test]
fn metadata_harness() {
    check("metadata");
}

#[test]
fn invalid_harness_keeps_the_impl_and_reports_every_error() {
    check("invalid");
}

#[test]
fn renamed_crate_harness_reaches_the_crate_by_the_given_path() {
    check("renamed_crate");
}
