//! MCP servers registered with an [`AgentBuilder`], connected by
//! [`build_async`](AgentBuilder::build_async).

use crate::agent::{Connect, PendingSource};
use crate::mcp::McpHarness;
use crate::{Agent, AgentBuilder, BuildError};

/// Connects `server`, avoiding the names given to the connector.
fn connector(server: McpHarness) -> Connect {
    Box::new(move |taken| {
        Box::pin(async move {
            let name = server.name().to_owned();
            server
                .reserve_names(taken)
                .connect()
                .await
                .map_err(|error| BuildError::McpServer {
                    server: name,
                    message: error.to_string(),
                })
        })
    })
}

impl AgentBuilder {
    /// Registers an MCP server, connected by [`build_async`](Self::build_async). Unlike a
    /// harness connected beforehand with [`McpHarness::connect`] and registered with
    /// [`with_harness`](Self::with_harness), its tools that collide with another tool of the
    /// agent are exposed as `{harness}_{tool}` instead of failing the build.
    ///
    /// ```no_run
    /// use hpd_agent::AgentBuilder;
    /// use hpd_agent::mcp::McpHarness;
    ///
    /// # async fn demo() -> Result<(), hpd_agent::BuildError> {
    /// let agent = AgentBuilder::new()
    ///     .with_mcp_server(McpHarness::stdio("Time", "uvx", ["mcp-server-time"]))
    ///     .with_openai("gpt-4o-mini")
    ///     .build_async()
    ///     .await?;
    /// # drop(agent);
    /// # Ok(())
    /// # }
    /// # fn main() { let _ = demo(); }
    /// ```
    #[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
    pub fn with_mcp_server(self, server: McpHarness) -> Self {
        let name = server.name().to_owned();
        self.add_pending(PendingSource {
            name,
            connect: connector(server),
        })
    }

    /// Connects the MCP servers (the config's `mcp_servers`, then those of
    /// [`with_mcp_server`](Self::with_mcp_server), one after the other), registers each as a
    /// harness after the other registrations, and builds the agent as
    /// [`build`](Self::build) does.
    ///
    /// A server tool whose name another tool of the agent (registered before it, or a
    /// harness name) already uses is exposed as `{harness}_{tool}`.
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, AgentConfig, BuildError, ScriptedChatClient};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let config = AgentConfig::from_json(
    ///     r#"{"mcp_servers": [{"name": "Missing", "command": "/nonexistent/mcp-server"}]}"#,
    /// ).unwrap();
    /// // `build` cannot connect servers ...
    /// let error = AgentBuilder::from_config(config.clone())
    ///     .with_chat_client(ScriptedChatClient::new())
    ///     .build()
    ///     .unwrap_err();
    /// assert!(matches!(error, BuildError::McpNeedsBuildAsync { .. }));
    /// // ... `build_async` does, and says which one failed.
    /// let error = AgentBuilder::from_config(config)
    ///     .with_chat_client(ScriptedChatClient::new())
    ///     .build_async()
    ///     .await
    ///     .unwrap_err();
    /// assert!(error.to_string().starts_with("MCP server 'Missing': could not start"), "{error}");
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// [`BuildError::McpServer`] when a server cannot be connected (its message is the
    /// [`McpError`](crate::mcp::McpError)'s), else the errors of [`build`](Self::build).
    #[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
    pub async fn build_async(mut self) -> Result<Agent, BuildError> {
        let (configs, pending) = self.take_pending();
        let sources = configs
            .iter()
            .map(|config| PendingSource {
                name: config.name.clone(),
                connect: connector(McpHarness::from(config)),
            })
            .chain(pending);
        let mut taken = self.tool_names_in_use();
        for source in sources {
            let harness = (source.connect)(taken.clone()).await?;
            taken.push(harness.name().to_owned());
            taken.extend(harness.tool_names());
            self = self.with_harness(harness);
        }
        self.build()
    }
}
