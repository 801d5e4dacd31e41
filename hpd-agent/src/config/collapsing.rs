//! [`CollapsingConfig`]: how harnesses collapse behind containers.

/// How harnesses collapse behind containers (JSON `collapsing`).
///
/// The default has collapsing and recovery on, recovered calls not executed, expansions
/// cleared at turn end, no never-collapsed harness, and the request layout that changes least
/// text (not the cache-stable one).
///
/// # Examples
///
/// ```
/// use hpd_agent::{AgentConfig, CollapsingConfig};
///
/// let config = AgentConfig::from_json(r#"{"collapsing": {"never_collapse": ["WeatherTools"]}}"#)?;
/// assert_eq!(
///     config.collapsing,
///     CollapsingConfig { never_collapse: vec!["WeatherTools".into()], ..CollapsingConfig::default() }
/// );
/// # Ok::<(), hpd_agent::ConfigError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct CollapsingConfig {
    /// Collapsing on or off (JSON `enabled`, default `true`).
    pub enabled: bool,
    /// Harnesses (names matched case-insensitively; unknown names ignored) whose members are
    /// always visible and whose container never appears (JSON `never_collapse`, default `[]`).
    pub never_collapse: Vec<String>,
    /// Whether a call of a hidden member expands its container (JSON `recovery`, default
    /// `true`).
    pub recovery: bool,
    /// Whether a recovered call is executed right after the expansion (JSON
    /// `execute_recovered_calls`, default `false`).
    pub execute_recovered_calls: bool,
    /// Whether expansions and their instructions persist across the turns of a session (JSON
    /// `persist_system_prompt_injections`, default `false`).
    pub persist_system_prompt_injections: bool,
    /// Lays requests out so that each one starts with the previous one (JSON `cache_stable`,
    /// default `false`), for providers that cache the longest unchanged prefix of a request.
    ///
    /// Off, an expanded container leaves the tool list (its members take its place at the end)
    /// and the system prompts of expanded containers are appended to the system text. On, an
    /// expanded container stays where it was in the tool list and its members are appended after
    /// every other tool, so the tools before them do not change; and the system text never
    /// changes: a container's system prompt is carried by the result of the call that expanded
    /// it (the container call, a recovered call, or, when the expansion came from a forced tool
    /// choice, the first call of one of its members), where it stays in the conversation. A
    /// turn end that collapses the containers does not remove those results from the history.
    pub cache_stable: bool,
}

impl Default for CollapsingConfig {
    /// `enabled: true`, `never_collapse: []`, `recovery: true`,
    /// `execute_recovered_calls: false`, `persist_system_prompt_injections: false`,
    /// `cache_stable: false`.
    fn default() -> Self {
        CollapsingConfig {
            enabled: true,
            never_collapse: Vec::new(),
            recovery: true,
            execute_recovered_calls: false,
            persist_system_prompt_injections: false,
            cache_stable: false,
        }
    }
}

impl CollapsingConfig {
    /// Whether this is [`CollapsingConfig::default()`] (then serialization leaves it out).
    ///
    /// # Examples
    ///
    /// ```
    /// use hpd_agent::CollapsingConfig;
    ///
    /// assert!(CollapsingConfig::default().is_default());
    /// assert!(!CollapsingConfig { enabled: false, ..CollapsingConfig::default() }.is_default());
    /// ```
    #[must_use]
    pub fn is_default(&self) -> bool {
        *self == CollapsingConfig::default()
    }
}
