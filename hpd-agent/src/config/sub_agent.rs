//! [`SubAgentConfig`]: a sub-agent tool described as data.

use super::AgentConfig;

/// A sub-agent tool described as data (an entry of JSON `sub_agents`).
///
/// JSON: `{"name", "description", "config": {AgentConfig}, "parent_functions": [...]}`; `name`
/// (non-empty) and `description` are required, `config` defaults to the empty config and
/// `parent_functions` to `[]`.
///
/// # Examples
///
/// ```
/// use hpd_agent::AgentConfig;
/// use hpd_agent::config::SubAgentConfig;
///
/// let config = AgentConfig::from_json(r#"{"SubAgents": [{
///     "Name": "researcher",
///     "Description": "Looks things up.",
///     "Config": {"Instructions": "Be thorough.", "ToolHarnesses": ["SearchTools"]},
///     "ParentFunctions": ["DatabaseTools.query"]
/// }]}"#)?;
/// let sub_agent: &SubAgentConfig = &config.sub_agents[0];
/// assert_eq!(sub_agent.name, "researcher");
/// assert_eq!(sub_agent.config.instructions.as_deref(), Some("Be thorough."));
/// assert_eq!(sub_agent.parent_functions, ["DatabaseTools.query"]);
/// # Ok::<(), hpd_agent::config::ConfigError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct SubAgentConfig {
    /// The tool name the parent sees (JSON `name`).
    pub name: String,
    /// The tool description the parent sees (JSON `description`).
    pub description: String,
    /// The child agent's own config (JSON `config`).
    pub config: Box<AgentConfig>,
    /// `Harness.function` references of the parent's functions the child may call (JSON
    /// `parent_functions`).
    pub parent_functions: Vec<String>,
}

impl SubAgentConfig {
    /// A sub-agent with no parent functions.
    ///
    /// # Examples
    ///
    /// ```
    /// use hpd_agent::AgentConfig;
    /// use hpd_agent::config::SubAgentConfig;
    ///
    /// let sub_agent = SubAgentConfig::new("researcher", "Looks things up.", AgentConfig::default());
    /// assert!(sub_agent.parent_functions.is_empty());
    /// ```
    #[must_use]
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        config: AgentConfig,
    ) -> Self {
        SubAgentConfig {
            name: name.into(),
            description: description.into(),
            config: Box::new(config),
            parent_functions: Vec::new(),
        }
    }

    /// Hands these functions of the parent (`Harness.function` references) to the child,
    /// replacing an earlier list.
    ///
    /// # Examples
    ///
    /// ```
    /// use hpd_agent::AgentConfig;
    /// use hpd_agent::config::SubAgentConfig;
    ///
    /// let sub_agent = SubAgentConfig::new("db", "Queries the database.", AgentConfig::default())
    ///     .with_parent_functions(["DatabaseTools.query"]);
    /// assert_eq!(sub_agent.parent_functions, ["DatabaseTools.query"]);
    /// ```
    #[must_use]
    pub fn with_parent_functions<I, S>(mut self, functions: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.parent_functions = functions.into_iter().map(Into::into).collect();
        self
    }
}
