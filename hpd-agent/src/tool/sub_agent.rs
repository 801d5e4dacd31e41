//! [`SubAgent`]: the declaration of a tool that runs a child agent.

use serde_json::{Value, json};

use crate::config::{AgentConfig, SubAgentConfig};

/// The parameter schema of every sub-agent tool: one required `input` string.
pub(crate) fn sub_agent_parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "input": {
                "type": "string",
                "description": "The task or question for the sub-agent."
            }
        },
        "required": ["input"]
    })
}

/// How deep sub-agents may nest when nothing else is set
/// ([`SubAgent::with_max_depth`] sets it per sub-agent).
///
/// ```
/// use hpd_agent::{AgentConfig, SubAgent};
/// use hpd_agent::tool::DEFAULT_MAX_SUB_AGENT_DEPTH;
///
/// assert_eq!(DEFAULT_MAX_SUB_AGENT_DEPTH, 3);
/// let shallow = SubAgent::new("helper", "Helps.", AgentConfig::default()).with_max_depth(1);
/// # drop(shallow);
/// ```
pub const DEFAULT_MAX_SUB_AGENT_DEPTH: usize = 3;

/// Renamed to [`DEFAULT_MAX_SUB_AGENT_DEPTH`], which says what the depth is of.
#[deprecated(since = "0.1.0", note = "renamed to `DEFAULT_MAX_SUB_AGENT_DEPTH`")]
pub const DEFAULT_MAX_DEPTH: usize = DEFAULT_MAX_SUB_AGENT_DEPTH;

/// A tool that runs a child agent.
///
/// The parent sees one tool with a single required `input` string parameter; the result is the
/// child's final text, or an error result (`Error: sub-agent '{name}' failed: ...`) when the
/// child's run fails. The child is built from its own [`AgentConfig`] (instructions, harnesses,
/// collapsing settings) when the parent is built, and uses the parent's chat client unless its
/// config names a model. Each call runs in a fresh child session.
///
/// Registered with [`AgentBuilder::with_sub_agent`](crate::AgentBuilder::with_sub_agent), the
/// tool is always visible, in registration order among the plain functions. Returned by a
/// `#[sub_agent]` method of a harness, it is a member of that harness like a function: listed
/// by its container when the harness is collapsed, visible once it expands, guarded by the
/// harness's scoped middleware. Its tool name is then the attribute's `name` or the method's
/// name (the name given to [`SubAgent::new`] is not used).
///
/// [`with_parent_functions`](Self::with_parent_functions) hands functions of the parent's
/// harnesses to the child as plain tools; they run through a scoped pipeline of their harness
/// created for the child's run. Child events reach the parent's subscribers as
/// [`AgentEvent::SubAgent`](crate::AgentEvent::SubAgent), tagged with the sub-agent's name and
/// depth.
///
/// ```
/// use hpd_agent::{AgentBuilder, AgentConfig, ScriptedChatClient, SubAgent};
///
/// let researcher = SubAgent::new(
///     "researcher",
///     "Researches a question and answers it.",
///     AgentConfig::from_json(r#"{"instructions": "Be thorough."}"#).unwrap(),
/// );
/// let agent = AgentBuilder::new()
///     .with_sub_agent(researcher)
///     .with_chat_client(ScriptedChatClient::new())
///     .build()
///     .unwrap();
/// assert_eq!(agent.initial_tool_names(), ["researcher"]);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct SubAgent {
    /// Name, description, child config and parent functions: the same data as a config entry.
    pub(crate) entry: SubAgentConfig,
    pub(crate) max_depth: usize,
}

impl SubAgent {
    /// A sub-agent tool named `name`, described to the parent model by `description`, running
    /// a child agent built from `config`.
    ///
    /// ```
    /// use hpd_agent::{AgentConfig, SubAgent};
    ///
    /// let config = AgentConfig::from_json(r#"{"instructions": "Review code for bugs."}"#)?;
    /// let reviewer = SubAgent::new("reviewer", "Reviews a diff and lists bugs.", config);
    /// assert_eq!((reviewer.name(), reviewer.description()), ("reviewer", "Reviews a diff and lists bugs."));
    /// # Ok::<(), hpd_agent::config::ConfigError>(())
    /// ```
    #[must_use]
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        config: AgentConfig,
    ) -> Self {
        SubAgent::from_config(&SubAgentConfig::new(name, description, config))
    }

    /// The sub-agent of a config entry.
    ///
    /// ```
    /// use hpd_agent::{AgentConfig, SubAgent};
    ///
    /// let config = AgentConfig::from_json(r#"{"sub_agents": [
    ///     {"name": "researcher", "description": "Looks things up.", "config": {"instructions": "Be thorough."}}
    /// ]}"#)?;
    /// let researcher = SubAgent::from_config(&config.sub_agents[0]);
    /// assert_eq!(researcher.name(), "researcher");
    /// # Ok::<(), hpd_agent::config::ConfigError>(())
    /// ```
    #[must_use]
    pub fn from_config(config: &SubAgentConfig) -> Self {
        SubAgent {
            entry: config.clone(),
            max_depth: DEFAULT_MAX_SUB_AGENT_DEPTH,
        }
    }

    /// Hands these functions of the parent's harnesses (`Harness.function`) to the child.
    ///
    /// ```
    /// use hpd_agent::prelude::*;
    /// use hpd_agent::{AgentBuilder, AgentConfig, ScriptedChatClient};
    ///
    /// #[derive(Default)]
    /// pub struct Wiki;
    ///
    /// #[collapse("The wiki")]
    /// impl Wiki {
    ///     /// Searches the wiki.
    ///     #[ai_function]
    ///     fn search_wiki(&self, query: String) -> String { query }
    /// }
    ///
    /// // The child gets the parent's `Wiki.search_wiki` as a plain tool.
    /// let researcher = SubAgent::new("researcher", "Researches a topic.", AgentConfig::default())
    ///     .with_parent_functions(["Wiki.search_wiki"]);
    /// let agent = AgentBuilder::new()
    ///     .with_tool_harness::<Wiki>()
    ///     .with_sub_agent(researcher)
    ///     .with_chat_client(ScriptedChatClient::new())
    ///     .build()?;
    /// assert_eq!(agent.initial_tool_names(), ["researcher", "Wiki", "call_function"]);
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    #[must_use]
    pub fn with_parent_functions<I, S>(mut self, functions: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.entry
            .parent_functions
            .extend(functions.into_iter().map(Into::into));
        self
    }

    /// How deep this sub-agent may sit (default 3): 1 is a sub-agent of a top-level agent, 2 a
    /// sub-agent of that sub-agent's child (from its config's `sub_agents` or a `#[sub_agent]`
    /// member of one of its harnesses), and so on. Building an agent where this sub-agent is
    /// nested deeper fails with [`BuildError::SubAgentDepth`](crate::BuildError::SubAgentDepth).
    /// The limit is checked for each sub-agent with its own value; sub-agents read from a
    /// config always have the default.
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, AgentConfig, BuildError, ScriptedChatClient, SubAgent};
    ///
    /// // Registered on a top-level agent, the sub-agent sits at depth 1.
    /// let error = AgentBuilder::new()
    ///     .with_sub_agent(SubAgent::new("helper", "Helps.", AgentConfig::default()).with_max_depth(0))
    ///     .with_chat_client(ScriptedChatClient::new())
    ///     .build()
    ///     .unwrap_err();
    /// assert!(matches!(&error, BuildError::SubAgent { source, .. } if matches!(**source, BuildError::SubAgentDepth { max_depth: 0 })));
    /// let fine = AgentBuilder::new()
    ///     .with_sub_agent(SubAgent::new("helper", "Helps.", AgentConfig::default()).with_max_depth(1))
    ///     .with_chat_client(ScriptedChatClient::new())
    ///     .build();
    /// assert!(fine.is_ok());
    /// # Ok::<(), hpd_agent::config::ConfigError>(())
    /// ```
    #[must_use]
    pub fn with_max_depth(mut self, max_depth: usize) -> Self {
        self.max_depth = max_depth;
        self
    }

    /// The tool name.
    ///
    /// ```
    /// use hpd_agent::{AgentConfig, SubAgent};
    ///
    /// assert_eq!(SubAgent::new("critic", "Criticises a draft.", AgentConfig::default()).name(), "critic");
    /// ```
    #[must_use]
    pub fn name(&self) -> &str {
        &self.entry.name
    }

    /// The description the parent model reads.
    ///
    /// ```
    /// use hpd_agent::{AgentConfig, SubAgent};
    ///
    /// let critic = SubAgent::new("critic", "Criticises a draft.", AgentConfig::default());
    /// assert_eq!(critic.description(), "Criticises a draft.");
    /// ```
    #[must_use]
    pub fn description(&self) -> &str {
        &self.entry.description
    }

    /// The same sub-agent under another tool name.
    #[must_use]
    pub(crate) fn renamed(mut self, name: &str) -> Self {
        name.clone_into(&mut self.entry.name);
        self
    }
}
