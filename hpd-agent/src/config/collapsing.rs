//! [`CollapsingConfig`]: how harnesses collapse behind containers.

/// How harnesses collapse behind containers (JSON `collapsing`).
///
/// The default has collapsing and recovery on, recovered calls not executed, expansions
/// cleared at turn end, and no never-collapsed harness.
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
}

impl Default for CollapsingConfig {
    /// `enabled: true`, `never_collapse: []`, `recovery: true`,
    /// `execute_recovered_calls: false`, `persist_system_prompt_injections: false`.
    fn default() -> Self {
        CollapsingConfig {
            enabled: true,
            never_collapse: Vec::new(),
            recovery: true,
            execute_recovered_calls: false,
            persist_system_prompt_injections: false,
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
