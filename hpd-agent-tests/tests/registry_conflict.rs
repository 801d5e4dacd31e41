//! Two harnesses whose names differ only in case: the registry reports them, naming both Rust
//! types, and no agent builds in such a program. Its own test binary, because the conflict
//! poisons the process-wide registry.

use hpd_agent::prelude::*;
use hpd_agent::{AgentBuilder, BuildError, Registry, RegistryError, ScriptedChatClient};

/// One harness.
#[derive(Default)]
pub struct First;

#[tool_harness(name = "CaseTools")]
impl First {
    /// Pings.
    #[ai_function]
    fn ping(&self) -> String {
        "pong".to_owned()
    }
}

/// Another harness with a name that differs only in case.
#[derive(Default)]
pub struct Second;

#[tool_harness(name = "casetools")]
impl Second {
    /// Pongs.
    #[ai_function]
    fn pong(&self) -> String {
        "ping".to_owned()
    }
}

#[test]
fn names_that_differ_only_in_case_are_an_error_naming_both_types() {
    let error = Registry::global().validate().unwrap_err();
    let RegistryError::DuplicateName {
        first_type,
        second_type,
        ..
    } = &error
    else {
        panic!("unexpected error {error}");
    };
    let mut types = [*first_type, *second_type];
    types.sort_unstable();
    assert_eq!(
        types,
        ["registry_conflict::First", "registry_conflict::Second"]
    );
    let text = error.to_string();
    assert!(
        text.contains("registry_conflict::First") && text.contains("registry_conflict::Second"),
        "{text}"
    );
    assert!(text.contains("differ only in case"), "{text}");

    let build = AgentBuilder::new()
        .with_tool_harness::<First>()
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap_err();
    assert!(matches!(build, BuildError::Registry(_)), "{build}");
}
