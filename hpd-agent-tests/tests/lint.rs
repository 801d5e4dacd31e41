//! Clippy's view of every macro form: `ui/pass/all_forms.rs` as a public module of this test
//! crate, so `cargo clippy --all-targets -- -D warnings` lints the code the macros generate
//! (the file denies warnings, missing docs, unused qualifications and `clippy::pedantic`).
#![deny(warnings, missing_docs, unused_qualifications, clippy::pedantic)]

#[path = "ui/pass/all_forms.rs"]
pub mod all_forms;

#[test]
fn every_form_registers() {
    all_forms::main();
}
