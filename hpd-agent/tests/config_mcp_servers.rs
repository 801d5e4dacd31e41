//! The `mcp_servers` section of the agent config: parsing, key rules, errors, canonical form.

use hpd_agent::{
    AgentConfig, config::ConfigError, config::McpServerConfig, config::McpTransportConfig,
};

fn parse_err(text: &str) -> ConfigError {
    AgentConfig::from_json(text).expect_err("the config should be rejected")
}

#[test]
fn stdio_and_http_servers_parse() {
    let config = AgentConfig::from_json(
        r#"{"mcp_servers": [
            {"name": "Files", "command": "mcp-server-filesystem", "args": ["/data"],
             "env": {"LOG_LEVEL": "debug"}, "description": "Files under /data",
             "functions": ["read_text_file"], "timeout_ms": 5000},
            {"name": "Search", "url": "https://search.example/mcp",
             "headers": {"Authorization": "Bearer t"}, "collapse": false}
        ]}"#,
    )
    .unwrap();
    assert_eq!(
        config.mcp_servers,
        vec![
            McpServerConfig::stdio("Files", "mcp-server-filesystem", ["/data"])
                .with_env("LOG_LEVEL", "debug")
                .with_description("Files under /data")
                .with_functions(["read_text_file"])
                .with_timeout_ms(5000),
            McpServerConfig::http("Search", "https://search.example/mcp")
                .with_header("Authorization", "Bearer t")
                .with_collapse(false),
        ]
    );
    let McpTransportConfig::Stdio { args, .. } = &config.mcp_servers[0].transport else {
        panic!("expected a stdio server");
    };
    assert_eq!(args, &["/data"]);
}

#[test]
fn keys_follow_the_config_rules_but_env_and_header_names_are_kept() {
    let spelled = AgentConfig::from_json(
        r#"{"McpServers": [{"Name": "T", "Command": "srv", "TimeoutMs": 7, "Env": {"My_Var": "1"}}]}"#,
    )
    .unwrap();
    assert_eq!(
        spelled.mcp_servers[0],
        McpServerConfig::stdio("T", "srv", Vec::<String>::new())
            .with_timeout_ms(7)
            .with_env("My_Var", "1")
    );

    let err = parse_err(r#"{"mcp_servers": [{"name": "T", "command": "srv", "argz": []}]}"#);
    assert_eq!(err.path(), "mcp_servers[0]");
    assert!(
        err.message()
            .starts_with("unknown key 'argz' in McpServerConfig (did you mean 'args'?); known keys: name, command, args, env, url, headers, description, collapse, functions, timeout_ms"),
        "{}",
        err.message()
    );

    let err = parse_err(r#"{"mcp_servers": [{"name": "T", "command": "a", "Command": "b"}]}"#);
    assert_eq!(
        err.message(),
        "duplicate key in McpServerConfig: 'command' and 'Command' both mean 'command'"
    );
}

#[test]
fn each_mistake_has_its_message_and_path() {
    let cases: &[(&str, &str, &str)] = &[
        (
            r#"{"mcp_servers": [{"command": "srv"}]}"#,
            "mcp_servers[0]",
            "missing key 'name' in McpServerConfig; give the harness name",
        ),
        (
            r#"{"mcp_servers": [{"name": "T"}]}"#,
            "mcp_servers[0]",
            "missing key 'command' or 'url' in McpServerConfig; give 'command' for a stdio server or 'url' for an HTTP server",
        ),
        (
            r#"{"mcp_servers": [{"name": "T", "command": "a", "url": "http://x"}]}"#,
            "mcp_servers[0]",
            "McpServerConfig has both 'command' and 'url'; give 'command' for a stdio server or 'url' for an HTTP server",
        ),
        (
            r#"{"mcp_servers": [{"name": "T", "command": "a", "headers": {}}]}"#,
            "mcp_servers[0]",
            "'headers' belongs to an HTTP server ('url'), not to a stdio server ('command')",
        ),
        (
            r#"{"mcp_servers": [{"name": "T", "url": "http://x", "args": []}]}"#,
            "mcp_servers[0]",
            "'args' belongs to a stdio server ('command'), not to an HTTP server ('url')",
        ),
        (
            r#"{"mcp_servers": [{"name": "", "command": "a"}]}"#,
            "mcp_servers[0].name",
            "server name is empty",
        ),
        (
            r#"{"mcp_servers": [{"name": "T", "command": "a", "timeout_ms": 0}]}"#,
            "mcp_servers[0].timeout_ms",
            "timeout_ms must be at least 1",
        ),
        (
            r#"{"mcp_servers": [{"name": "T", "command": "a", "functions": []}]}"#,
            "mcp_servers[0].functions",
            "functions is empty; omit it to expose all functions",
        ),
        (
            r#"{"mcp_servers": [{"name": "T", "command": "a", "env": {"A": 1}}]}"#,
            "mcp_servers[0].env.A",
            "invalid type: integer `1`, expected a string",
        ),
    ];
    for (text, path, message) in cases {
        let err = parse_err(text);
        assert_eq!(err.path(), *path, "{text}");
        assert_eq!(err.message(), *message, "{text}");
    }
}

#[test]
fn null_is_absent_for_optional_values() {
    let config = AgentConfig::from_json(
        r#"{"mcp_servers": [{"name": "T", "url": "http://x", "description": null, "functions": null, "timeout_ms": null}]}"#,
    )
    .unwrap();
    assert_eq!(
        config.mcp_servers[0],
        McpServerConfig::http("T", "http://x")
    );
}

#[test]
fn canonical_form_round_trips() {
    let config = {
        let mut config = AgentConfig::default();
        config.mcp_servers = vec![
            McpServerConfig::stdio("Files", "srv", ["/data"])
                .with_env("B", "2")
                .with_env("A", "1")
                .with_timeout_ms(9),
            McpServerConfig::http("Web", "http://127.0.0.1:9/mcp")
                .with_header("Authorization", "Bearer t")
                .with_description("Web search")
                .with_collapse(false)
                .with_functions(["search"]),
        ];
        config
    };
    let json = config.to_json();
    assert_eq!(
        json,
        r#"{
  "mcp_servers": [
    {
      "name": "Files",
      "command": "srv",
      "args": [
        "/data"
      ],
      "env": {
        "A": "1",
        "B": "2"
      },
      "timeout_ms": 9
    },
    {
      "name": "Web",
      "url": "http://127.0.0.1:9/mcp",
      "headers": {
        "Authorization": "Bearer t"
      },
      "description": "Web search",
      "collapse": false,
      "functions": [
        "search"
      ]
    }
  ]
}"#
    );
    assert_eq!(AgentConfig::from_json(&json).unwrap(), config);
    // A config without servers leaves the section out.
    assert_eq!(AgentConfig::default().to_json(), "{}");
}
