//! [`ToolHarnessReference`]: one harness to register by name, as the config names it.

use std::collections::BTreeMap;

use serde_json::Value;

use super::ConfigError;
use super::parse::{parse_text, parse_value};

const TOOL_HARNESS_REFERENCE: &str = "ToolHarnessReference";

/// One harness to register, by name (an entry of JSON `tool_harnesses`).
///
/// In JSON it is either a string (the harness name, all functions) or an object with `name`,
/// `functions`, `config`, `metadata`, `middleware_configs` and `requires_approval`. The raw values are handed to the
/// harness's config type, its metadata type and its scoped middleware configs when the agent
/// is built.
///
/// # Examples
///
/// ```
/// use hpd_agent::AgentConfig;
/// use hpd_agent::config::ToolHarnessReference;
/// use serde_json::json;
///
/// let config = AgentConfig::from_json(r#"{"tool_harnesses": [
///     {"Name": "DatabaseTools", "Functions": ["query"],
///      "MiddlewareConfigs": {"DbAuditMiddleware": {"AuditLevel": "Detailed"}}}
/// ]}"#)?;
/// assert_eq!(
///     config.tool_harnesses[0],
///     ToolHarnessReference::new("DatabaseTools")
///         .with_functions(["query"])
///         .with_middleware_config("DbAuditMiddleware", json!({"AuditLevel": "Detailed"}))
/// );
/// # Ok::<(), hpd_agent::config::ConfigError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ToolHarnessReference {
    /// The harness name (matched case-insensitively at build; JSON `name`).
    pub name: String,
    /// The functions to expose; `None` exposes all (JSON `functions`; `[]` is rejected when
    /// parsing).
    pub functions: Option<Vec<String>>,
    /// The raw config for the harness's config constructor (JSON `config`; a JSON `null` is
    /// `Some(Value::Null)`, only an omitted key is `None`).
    pub config: Option<Value>,
    /// The raw metadata for the harness's metadata type (JSON `metadata`; a JSON `null` is
    /// `Some(Value::Null)`, only an omitted key is `None`).
    pub metadata: Option<Value>,
    /// Raw configs of the harness's scoped middleware, keyed by middleware type name as written
    /// (JSON `middleware_configs`).
    pub middleware_configs: BTreeMap<String, Value>,
    /// Functions whose calls wait for a person's approval, besides those the harness declares
    /// so (JSON `requires_approval`: a list of function names; see
    /// [`approval`](crate::approval)). An unknown name fails the build.
    pub requires_approval: Vec<String>,
}

impl ToolHarnessReference {
    /// A reference to all functions of the harness `name`, with no config or metadata.
    ///
    /// # Examples
    ///
    /// ```
    /// use hpd_agent::config::ToolHarnessReference;
    ///
    /// let reference = ToolHarnessReference::new("WeatherTools");
    /// assert_eq!(reference.name, "WeatherTools");
    /// assert!(reference.is_name_only());
    /// ```
    #[must_use]
    pub fn new(name: impl Into<String>) -> Self {
        ToolHarnessReference {
            name: name.into(),
            functions: None,
            config: None,
            metadata: None,
            middleware_configs: BTreeMap::new(),
            requires_approval: Vec::new(),
        }
    }

    /// Makes calls of these functions wait for a person's approval (added to an earlier list).
    ///
    /// # Examples
    ///
    /// ```
    /// use hpd_agent::AgentConfig;
    /// use hpd_agent::config::ToolHarnessReference;
    ///
    /// let config = AgentConfig::from_json(r#"{"tool_harnesses": [
    ///     {"name": "FileTools", "requires_approval": ["delete", "move"]}
    /// ]}"#)?;
    /// assert_eq!(config.tool_harnesses[0], ToolHarnessReference::new("FileTools").with_approval_required(["delete", "move"]));
    /// # Ok::<(), hpd_agent::config::ConfigError>(())
    /// ```
    #[must_use]
    pub fn with_approval_required<I, S>(mut self, functions: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        for function in functions {
            let function = function.into();
            if !self.requires_approval.contains(&function) {
                self.requires_approval.push(function);
            }
        }
        self
    }

    /// Exposes only these functions (replacing an earlier selection). An empty selection is
    /// kept as it is and rejected by the build and by [`AgentConfig::from_json`](super::AgentConfig::from_json).
    ///
    /// # Examples
    ///
    /// ```
    /// use hpd_agent::config::ToolHarnessReference;
    ///
    /// let reference = ToolHarnessReference::new("WeatherTools").with_functions(["get_weather"]);
    /// assert_eq!(reference.functions, Some(vec!["get_weather".to_owned()]));
    /// ```
    #[must_use]
    pub fn with_functions<I, S>(mut self, functions: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.functions = Some(functions.into_iter().map(Into::into).collect());
        self
    }

    /// Sets the raw config for the harness's config constructor.
    ///
    /// # Examples
    ///
    /// ```
    /// use hpd_agent::config::ToolHarnessReference;
    /// use serde_json::json;
    ///
    /// let reference = ToolHarnessReference::new("SearchTools").with_config(json!({"MaxResults": 3}));
    /// assert_eq!(reference.config, Some(json!({"MaxResults": 3})));
    /// ```
    #[must_use]
    pub fn with_config(mut self, config: Value) -> Self {
        self.config = Some(config);
        self
    }

    /// Sets the raw metadata for the harness's metadata type.
    ///
    /// # Examples
    ///
    /// ```
    /// use hpd_agent::config::ToolHarnessReference;
    /// use serde_json::json;
    ///
    /// let reference = ToolHarnessReference::new("SearchTools")
    ///     .with_metadata(json!({"DefaultProvider": "brave", "HasTavilyProvider": false}));
    /// assert!(reference.metadata.is_some());
    /// ```
    #[must_use]
    pub fn with_metadata(mut self, metadata: Value) -> Self {
        self.metadata = Some(metadata);
        self
    }

    /// Sets the raw config of one scoped middleware, keyed by its type name. Middleware names
    /// match case-insensitively (as at build), so this replaces an earlier config whose key
    /// differs only in case; the new key is kept as written.
    ///
    /// # Examples
    ///
    /// ```
    /// use hpd_agent::config::ToolHarnessReference;
    /// use serde_json::json;
    ///
    /// let reference = ToolHarnessReference::new("DatabaseTools")
    ///     .with_middleware_config("dbauditmiddleware", json!({}))
    ///     .with_middleware_config("DbAuditMiddleware", json!({"AuditLevel": "Detailed"}));
    /// assert_eq!(reference.middleware_configs.len(), 1);
    /// assert_eq!(reference.middleware_configs["DbAuditMiddleware"], json!({"AuditLevel": "Detailed"}));
    /// ```
    #[must_use]
    pub fn with_middleware_config(mut self, middleware: impl Into<String>, config: Value) -> Self {
        let middleware = middleware.into();
        let folded = middleware.to_ascii_lowercase();
        self.middleware_configs
            .retain(|name, _| name.to_ascii_lowercase() != folded);
        self.middleware_configs.insert(middleware, config);
        self
    }

    /// Parses one harness reference from JSON text (a string or an object), with the rules of
    /// a `tool_harnesses` entry; for example the argument of a builder override read from a
    /// file.
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] whose document is `ToolHarnessReference`: the text is not JSON
    /// (`invalid ToolHarnessReference JSON: ...`), or the reference is invalid (no name, an
    /// empty name, `"functions": []`, an unknown or duplicate key, a wrong value type).
    ///
    /// # Examples
    ///
    /// ```
    /// use hpd_agent::config::ToolHarnessReference;
    ///
    /// let reference =
    ///     ToolHarnessReference::from_json(r#"{"Name": "WeatherTools", "Functions": ["get_forecast"]}"#)?;
    /// assert_eq!(reference, ToolHarnessReference::new("WeatherTools").with_functions(["get_forecast"]));
    ///
    /// let err = ToolHarnessReference::from_json(r#"{"Name": "WeatherTools", "Functions": []}"#)
    ///     .unwrap_err();
    /// assert_eq!(err.path(), "Functions");
    /// # Ok::<(), hpd_agent::config::ConfigError>(())
    /// ```
    pub fn from_json(text: &str) -> Result<ToolHarnessReference, ConfigError> {
        parse_text(TOOL_HARNESS_REFERENCE, text)
    }

    /// Reads one harness reference from a JSON value, with the rules of
    /// [`from_json`](Self::from_json).
    ///
    /// # Errors
    ///
    /// As for [`from_json`](Self::from_json), without line and column.
    ///
    /// # Examples
    ///
    /// ```
    /// use hpd_agent::config::ToolHarnessReference;
    /// use serde_json::json;
    ///
    /// let reference = ToolHarnessReference::from_value(json!("MathTools"))?;
    /// assert_eq!(reference, ToolHarnessReference::new("MathTools"));
    /// assert!(ToolHarnessReference::from_value(json!({"functions": ["add"]})).is_err());
    /// # Ok::<(), hpd_agent::config::ConfigError>(())
    /// ```
    pub fn from_value(value: Value) -> Result<ToolHarnessReference, ConfigError> {
        parse_value(TOOL_HARNESS_REFERENCE, value)
    }

    /// Whether the reference has only a name (then it serializes as a bare string).
    ///
    /// # Examples
    ///
    /// ```
    /// use hpd_agent::config::ToolHarnessReference;
    ///
    /// assert!(ToolHarnessReference::new("MathTools").is_name_only());
    /// assert!(!ToolHarnessReference::new("MathTools").with_functions(["add"]).is_name_only());
    /// ```
    #[must_use]
    pub fn is_name_only(&self) -> bool {
        self.functions.is_none()
            && self.config.is_none()
            && self.metadata.is_none()
            && self.middleware_configs.is_empty()
            && self.requires_approval.is_empty()
    }
}

impl From<&str> for ToolHarnessReference {
    /// The same as [`ToolHarnessReference::new`].
    fn from(name: &str) -> Self {
        ToolHarnessReference::new(name)
    }
}

impl From<String> for ToolHarnessReference {
    /// The same as [`ToolHarnessReference::new`].
    fn from(name: String) -> Self {
        ToolHarnessReference::new(name)
    }
}
