//! [`ConfigError`]: why a JSON configuration did not parse.

use std::fmt;

/// What kind of mistake a [`ConfigError`] reports.
///
/// # Examples
///
/// ```
/// use hpd_agent::AgentConfig;
/// use hpd_agent::config::ConfigErrorKind;
///
/// let err = AgentConfig::from_json("{").unwrap_err();
/// assert_eq!(err.kind(), ConfigErrorKind::Syntax);
/// let err = AgentConfig::from_json(r#"{"colapsing": {}}"#).unwrap_err();
/// assert_eq!(err.kind(), ConfigErrorKind::Invalid);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ConfigErrorKind {
    /// The text is not JSON (a syntax error, an unexpected end, trailing characters).
    Syntax,
    /// The document is JSON but not a valid configuration: an unknown or duplicate key, a value
    /// of the wrong type, a missing or empty required value.
    Invalid,
}

/// Why an [`AgentConfig`](crate::AgentConfig) or a
/// [`RunConfigData`](crate::config::RunConfigData) (the JSON form of `AgentRunConfig`) did not parse.
///
/// It carries the JSON path of the offending value (`serde_path_to_error` syntax:
/// `tool_harnesses[0].functions`, `.` for the document itself). Object keys in the path are
/// spelled as they are written in the document, so `ToolHarnesses[0].Functions` for a PascalCase
/// document: the path locates the value in the text the user wrote.
///
/// # Display
///
/// - Not JSON: `invalid AgentConfig JSON: {serde_json message}`, serde_json's message as it
///   is, ending with `at line {l} column {c}`.
/// - Not a valid configuration: `invalid AgentConfig at '{path}' (line {l}, column {c}):
///   {message}`. The ` at '{path}'` part is left out for the document itself (path `.`), the
///   ` (line .., column ..)` part when the document did not come from text
///   ([`AgentConfig::from_value`](crate::AgentConfig::from_value)).
///
/// `AgentConfig` reads `AgentRunConfig` for a run config. `{message}` is serde's message (for
/// a value of the wrong type) or one of the texts of this module, without a position; the
/// specified texts (for example `collapsing must be an object; omit it to use the default`)
/// appear in it verbatim.
///
/// # Examples
///
/// ```
/// use hpd_agent::AgentConfig;
///
/// let err = AgentConfig::from_json(r#"{"tool_harnesses": [{"name": "Math", "functions": []}]}"#)
///     .unwrap_err();
/// assert_eq!(err.path(), "tool_harnesses[0].functions");
/// assert_eq!(err.message(), "functions is empty; omit it to expose all functions");
/// assert_eq!(
///     err.to_string(),
///     "invalid AgentConfig at 'tool_harnesses[0].functions' (line 1, column 53): \
///      functions is empty; omit it to expose all functions"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    kind: ConfigErrorKind,
    document: &'static str,
    path: String,
    message: String,
    line: usize,
    column: usize,
}

impl ConfigError {
    /// A syntax error found while checking that the text is JSON.
    pub(crate) fn syntax(document: &'static str, err: &serde_json::Error) -> Self {
        ConfigError {
            kind: ConfigErrorKind::Syntax,
            document,
            path: ".".to_owned(),
            message: err.to_string(),
            line: err.line(),
            column: err.column(),
        }
    }

    /// A value nested deeper than JSON text may be.
    pub(crate) fn too_deep(document: &'static str, path: String) -> Self {
        ConfigError {
            kind: ConfigErrorKind::Invalid,
            document,
            path: path.trim_start_matches('.').to_owned(),
            message: "the value is nested too deeply (JSON text allows 128 levels)".to_owned(),
            line: 0,
            column: 0,
        }
    }

    /// An error of the deserialization, with the path where it happened.
    pub(crate) fn from_tracked(
        document: &'static str,
        err: serde_path_to_error::Error<serde_json::Error>,
    ) -> Self {
        let path = err.path().to_string();
        let inner = err.into_inner();
        let kind = match inner.classify() {
            serde_json::error::Category::Data => ConfigErrorKind::Invalid,
            serde_json::error::Category::Io
            | serde_json::error::Category::Syntax
            | serde_json::error::Category::Eof => ConfigErrorKind::Syntax,
        };
        let (line, column) = (inner.line(), inner.column());
        let mut message = inner.to_string();
        if kind == ConfigErrorKind::Invalid && line != 0 {
            // The position is shown apart from the message (see `Display`).
            let position = format!(" at line {line} column {column}");
            if message.ends_with(&position) {
                message.truncate(message.len() - position.len());
            }
        }
        ConfigError {
            kind,
            document,
            path,
            message,
            line,
            column,
        }
    }

    /// What kind of mistake this is.
    ///
    /// # Examples
    ///
    /// ```
    /// use hpd_agent::AgentConfig;
    /// use hpd_agent::config::ConfigErrorKind;
    ///
    /// let err = AgentConfig::from_json(r#"{"name": 1}"#).unwrap_err();
    /// assert_eq!(err.kind(), ConfigErrorKind::Invalid);
    /// ```
    #[must_use]
    pub fn kind(&self) -> ConfigErrorKind {
        self.kind
    }

    /// The kind of document that failed: `AgentConfig`, `AgentRunConfig` or
    /// `ToolHarnessReference`.
    ///
    /// # Examples
    ///
    /// ```
    /// use hpd_agent::config::RunConfigData;
    ///
    /// let err = RunConfigData::from_json("[").unwrap_err();
    /// assert_eq!(err.document(), "AgentRunConfig");
    /// ```
    #[must_use]
    pub fn document(&self) -> &'static str {
        self.document
    }

    /// The JSON path of the offending value, e.g. `tool_harnesses[0].functions`; `.` for the
    /// document itself (also for every syntax error). Keys are spelled as in the document.
    ///
    /// # Examples
    ///
    /// ```
    /// use hpd_agent::AgentConfig;
    ///
    /// let err = AgentConfig::from_json(r#"{"MaxIterations": "many"}"#).unwrap_err();
    /// assert_eq!(err.path(), "MaxIterations");
    /// ```
    #[must_use]
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The message without the document name, path and position: serde's message or one of the
    /// texts of this module (for a syntax error, serde_json's message, which ends with
    /// `at line {l} column {c}`).
    ///
    /// # Examples
    ///
    /// ```
    /// use hpd_agent::AgentConfig;
    ///
    /// let err = AgentConfig::from_json(r#"{"collapsing": null}"#).unwrap_err();
    /// assert_eq!(err.message(), "collapsing must be an object; omit it to use the default");
    /// ```
    #[must_use]
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The 1-based line of the error in the text, `None` when the document was not parsed from
    /// text ([`AgentConfig::from_value`](crate::AgentConfig::from_value)).
    ///
    /// # Examples
    ///
    /// ```
    /// use hpd_agent::AgentConfig;
    ///
    /// let err = AgentConfig::from_json("{\n  \"name\": 1\n}").unwrap_err();
    /// assert_eq!(err.line(), Some(2));
    /// let err = AgentConfig::from_value(serde_json::json!({"name": 1})).unwrap_err();
    /// assert_eq!(err.line(), None);
    /// ```
    #[must_use]
    pub fn line(&self) -> Option<usize> {
        (self.line != 0).then_some(self.line)
    }

    /// The 1-based column of the error in the text, `None` when the document was not parsed
    /// from text.
    ///
    /// # Examples
    ///
    /// ```
    /// use hpd_agent::AgentConfig;
    ///
    /// let err = AgentConfig::from_json(r#"{"name": 1}"#).unwrap_err();
    /// assert_eq!(err.column(), Some(10));
    /// ```
    #[must_use]
    pub fn column(&self) -> Option<usize> {
        (self.line != 0).then_some(self.column)
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            ConfigErrorKind::Syntax => {
                return write!(f, "invalid {} JSON: {}", self.document, self.message);
            }
            ConfigErrorKind::Invalid => write!(f, "invalid {}", self.document)?,
        }
        if self.path != "." {
            write!(f, " at '{}'", self.path)?;
        }
        if self.line != 0 {
            write!(f, " (line {}, column {})", self.line, self.column)?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ConfigError {}
