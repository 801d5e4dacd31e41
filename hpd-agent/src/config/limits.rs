//! [`Limits`]: the agent-wide caps on what tools exchange with the model.

/// The default of [`Limits::max_tool_result_bytes`]: 64 KiB.
///
/// ```
/// use hpd_agent::config::Limits;
/// use hpd_agent::config::DEFAULT_MAX_TOOL_RESULT_BYTES;
///
/// assert_eq!(Limits::default().max_tool_result_bytes, DEFAULT_MAX_TOOL_RESULT_BYTES);
/// ```
pub const DEFAULT_MAX_TOOL_RESULT_BYTES: usize = 64 * 1024;
/// The default of [`Limits::max_tool_result_media_bytes`]: 5 MiB, the largest image the
/// Anthropic API takes.
///
/// ```
/// use hpd_agent::config::Limits;
/// use hpd_agent::config::DEFAULT_MAX_TOOL_RESULT_MEDIA_BYTES;
///
/// assert_eq!(Limits::default().max_tool_result_media_bytes, DEFAULT_MAX_TOOL_RESULT_MEDIA_BYTES);
/// ```
pub const DEFAULT_MAX_TOOL_RESULT_MEDIA_BYTES: usize = 5 * 1024 * 1024;
/// The default of [`Limits::max_argument_bytes`]: 256 KiB.
///
/// ```
/// use hpd_agent::config::Limits;
/// use hpd_agent::config::DEFAULT_MAX_ARGUMENT_BYTES;
///
/// assert_eq!(Limits::default().max_argument_bytes, DEFAULT_MAX_ARGUMENT_BYTES);
/// ```
pub const DEFAULT_MAX_ARGUMENT_BYTES: usize = 256 * 1024;
/// The default of [`Limits::max_parallel_calls`].
///
/// ```
/// use hpd_agent::config::Limits;
/// use hpd_agent::config::DEFAULT_MAX_PARALLEL_CALLS;
///
/// assert_eq!(Limits::default().max_parallel_calls, DEFAULT_MAX_PARALLEL_CALLS);
/// ```
pub const DEFAULT_MAX_PARALLEL_CALLS: usize = 16;

/// Caps on what tools exchange with the model, for every tool of an agent (functions of
/// `#[tool_harness]` types, harnesses built at run time, MCP servers, sub-agents) and for
/// [`ToolSession`](crate::agent::ToolSession) calls (JSON `limits`).
///
/// - **`max_tool_result_bytes`**: a result text longer than this (in UTF-8 bytes) is cut at a
///   character boundary and ends with a marker saying how much was dropped, e.g.
///   `[truncated: 1048576 of 1114112 bytes dropped]`; the kept text and the marker together
///   stay within the limit (for limits of at least 64 bytes; below that the marker alone is
///   sent). Container answers and not-found texts are cut the same way. Middleware sees the
///   whole result in `after_function`; the cut applies to what the model (and the
///   `ToolCallFinished` event) gets. A result with [content parts](crate::chat::ContentPart) is
///   limited per part: each text part (and each embedded text resource) is cut the same way,
///   and the text form is cut as a whole.
/// - **`max_tool_result_media_bytes`**: an image, audio or binary resource part larger than
///   this (decoded bytes) is not sent; a text part takes its place that says so, e.g.
///   `[image: image/png, 9000000 bytes, not sent: over the limit of 5242880 bytes]`.
///   A structured value whose JSON is longer than `max_tool_result_bytes` is dropped (its cut
///   JSON stays in the text).
/// - **`max_argument_bytes`**: a call whose arguments text is longer than this is answered
///   with an error result before anything parses it (no middleware `before_function` or body
///   runs, a container is not expanded):
///   `Error: the arguments of '{name}' are {n} bytes; the limit is {max} bytes`.
/// - **`max_parallel_calls`**: how many calls of one model response run at once. The rest
///   wait for a free slot; results still come back in call order, every call answered. A
///   [`ToolSession`](crate::agent::ToolSession) runs at most this many calls at once too.
///
/// Each value must be at least 1. `Limits` is `#[non_exhaustive]`, so that a release can add a
/// cap: outside the crate it is made by `default()` and the `with_*` setters (or read from JSON).
///
/// # Examples
///
/// ```
/// use hpd_agent::AgentConfig;
/// use hpd_agent::config::Limits;
///
/// let config = AgentConfig::from_json(r#"{"limits": {"MaxParallelCalls": 4}}"#)?;
/// assert_eq!(config.limits, Limits::default().with_max_parallel_calls(4));
///
/// let err = AgentConfig::from_json(r#"{"limits": {"max_argument_bytes": 0}}"#).unwrap_err();
/// assert_eq!(err.path(), "limits.max_argument_bytes");
/// assert_eq!(err.message(), "max_argument_bytes must be at least 1");
/// # Ok::<(), hpd_agent::config::ConfigError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Limits {
    /// The most UTF-8 bytes of one tool result sent to the model (JSON
    /// `max_tool_result_bytes`, default [`DEFAULT_MAX_TOOL_RESULT_BYTES`]).
    pub max_tool_result_bytes: usize,
    /// The most bytes of one image, audio or binary resource part of a tool result (JSON
    /// `max_tool_result_media_bytes`, default [`DEFAULT_MAX_TOOL_RESULT_MEDIA_BYTES`]).
    pub max_tool_result_media_bytes: usize,
    /// The most bytes of the arguments text of one call (JSON `max_argument_bytes`, default
    /// [`DEFAULT_MAX_ARGUMENT_BYTES`]).
    pub max_argument_bytes: usize,
    /// The most calls of one response running at once (JSON `max_parallel_calls`, default
    /// [`DEFAULT_MAX_PARALLEL_CALLS`]).
    pub max_parallel_calls: usize,
}

impl Default for Limits {
    /// [`DEFAULT_MAX_TOOL_RESULT_BYTES`], [`DEFAULT_MAX_ARGUMENT_BYTES`],
    /// [`DEFAULT_MAX_PARALLEL_CALLS`].
    fn default() -> Self {
        Limits {
            max_tool_result_bytes: DEFAULT_MAX_TOOL_RESULT_BYTES,
            max_tool_result_media_bytes: DEFAULT_MAX_TOOL_RESULT_MEDIA_BYTES,
            max_argument_bytes: DEFAULT_MAX_ARGUMENT_BYTES,
            max_parallel_calls: DEFAULT_MAX_PARALLEL_CALLS,
        }
    }
}

/// The shortest marker: `\n[truncated: N of M bytes dropped]` has this many bytes besides
/// the two numbers.
const MARKER_FIXED: usize = "\n[truncated:  of  bytes dropped]".len();

impl Limits {
    /// Sets [`max_tool_result_bytes`](Self::max_tool_result_bytes).
    ///
    /// ```
    /// let limits = hpd_agent::config::Limits::default().with_max_tool_result_bytes(4096);
    /// assert_eq!(limits.max_tool_result_bytes, 4096);
    /// ```
    #[must_use]
    pub fn with_max_tool_result_bytes(mut self, bytes: usize) -> Self {
        self.max_tool_result_bytes = bytes;
        self
    }

    /// Sets [`max_tool_result_media_bytes`](Self::max_tool_result_media_bytes).
    ///
    /// ```
    /// let limits = hpd_agent::config::Limits::default().with_max_tool_result_media_bytes(1 << 20);
    /// assert_eq!(limits.max_tool_result_media_bytes, 1 << 20);
    /// ```
    #[must_use]
    pub fn with_max_tool_result_media_bytes(mut self, bytes: usize) -> Self {
        self.max_tool_result_media_bytes = bytes;
        self
    }

    /// Sets [`max_argument_bytes`](Self::max_argument_bytes).
    ///
    /// ```
    /// let limits = hpd_agent::config::Limits::default().with_max_argument_bytes(1024);
    /// assert_eq!(limits.max_argument_bytes, 1024);
    /// ```
    #[must_use]
    pub fn with_max_argument_bytes(mut self, bytes: usize) -> Self {
        self.max_argument_bytes = bytes;
        self
    }

    /// Sets [`max_parallel_calls`](Self::max_parallel_calls).
    ///
    /// ```
    /// let limits = hpd_agent::config::Limits::default().with_max_parallel_calls(1);
    /// assert_eq!(limits.max_parallel_calls, 1);
    /// ```
    #[must_use]
    pub fn with_max_parallel_calls(mut self, calls: usize) -> Self {
        self.max_parallel_calls = calls;
        self
    }

    /// Whether this is [`Limits::default()`] (then serialization leaves it out).
    ///
    /// ```
    /// use hpd_agent::config::Limits;
    ///
    /// assert!(Limits::default().is_default());
    /// assert!(!Limits::default().with_max_parallel_calls(2).is_default());
    /// ```
    #[must_use]
    pub fn is_default(&self) -> bool {
        *self == Limits::default()
    }

    /// The name of the first field that is 0, if any.
    pub(crate) fn zero_field(&self) -> Option<&'static str> {
        [
            (self.max_tool_result_bytes, "max_tool_result_bytes"),
            (
                self.max_tool_result_media_bytes,
                "max_tool_result_media_bytes",
            ),
            (self.max_argument_bytes, "max_argument_bytes"),
            (self.max_parallel_calls, "max_parallel_calls"),
        ]
        .into_iter()
        .find(|(value, _)| *value == 0)
        .map(|(_, name)| name)
    }

    /// The error text for arguments over the limit, or `None` when they are within it.
    pub(crate) fn check_arguments(&self, name: &str, arguments: &str) -> Option<String> {
        (arguments.len() > self.max_argument_bytes).then(|| {
            format!(
                "Error: the arguments of '{}' are {} bytes; the limit is {} bytes",
                shown_name(name),
                arguments.len(),
                self.max_argument_bytes
            )
        })
    }
}

/// A model-supplied name for a message: at most 128 bytes, then `...`.
fn shown_name(name: &str) -> std::borrow::Cow<'_, str> {
    const MAX: usize = 128;
    if name.len() <= MAX {
        return name.into();
    }
    let mut end = MAX;
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &name[..end]).into()
}

/// `text` cut to at most `max` bytes (at a character boundary) including the marker that says
/// how much was dropped; the marker alone when `max` cannot hold it.
pub(crate) fn cut_text(text: String, max: usize) -> String {
    let total = text.len();
    if total <= max {
        return text;
    }
    // The dropped count has at most as many digits as the total.
    let digits = total.to_string().len();
    let room = max.saturating_sub(MARKER_FIXED + 2 * digits);
    let mut kept = room.min(total);
    while !text.is_char_boundary(kept) {
        kept -= 1;
    }
    let mut cut = text;
    cut.truncate(kept);
    let dropped = total - kept;
    cut.push_str(&format!(
        "\n[truncated: {dropped} of {total} bytes dropped]"
    ));
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_texts_are_kept() {
        assert_eq!(cut_text("abc".into(), 3), "abc");
        assert_eq!(cut_text(String::new(), 1), "");
    }

    #[test]
    fn long_texts_fit_the_limit_with_the_marker() {
        let text = "x".repeat(10_000);
        let cut = cut_text(text, 1000);
        assert!(cut.len() <= 1000, "{}", cut.len());
        let kept = cut.find('\n').unwrap();
        assert_eq!(
            &cut[kept..],
            format!("\n[truncated: {} of 10000 bytes dropped]", 10_000 - kept)
        );
        assert!(kept > 900);
    }

    #[test]
    fn cuts_at_character_boundaries() {
        // 3-byte characters: every limit gives valid UTF-8 and an exact dropped count.
        let text = "€".repeat(500);
        for max in 60..200 {
            let cut = cut_text(text.clone(), max);
            assert!(cut.len() <= max, "{max}: {}", cut.len());
            let kept = cut.find('\n').unwrap();
            assert_eq!(kept % 3, 0);
            assert!(cut.ends_with(&format!(
                "[truncated: {} of 1500 bytes dropped]",
                1500 - kept
            )));
        }
    }

    #[test]
    fn tiny_limits_send_the_marker_alone() {
        let cut = cut_text("hello world".into(), 1);
        assert_eq!(cut, "\n[truncated: 11 of 11 bytes dropped]");
    }
}
