//! [`CollapsingConfig`]: how harnesses collapse behind containers.

/// How harnesses collapse behind containers (JSON `collapsing`).
///
/// The default has collapsing and recovery on, recovered calls not executed, expansions
/// cleared at turn end, no never-collapsed harness, the [`native`](CollapsingLayout::Native)
/// layout (`fixed` on clients without deferred loading), opening ahead from
/// [`DEFAULT_OPEN_AHEAD`] and container answers as notes (opening ahead in `fixed` and in
/// `native` where a container's result loads the members; notes in `fixed` only). Plain
/// `fixed` is `CollapsingConfig::default().with_container_notes(false).without_open_ahead()`.
/// It is
/// `#[non_exhaustive]`, so that a release can add a field: outside the crate it is
/// made by `default()` (or read from JSON), then set with its `with_*` setters (one per field;
/// `with_never_collapse` adds one name) or by assigning its public fields.
///
/// # Examples
///
/// ```
/// use hpd_agent::AgentConfig;
/// use hpd_agent::config::CollapsingConfig;
///
/// let config = AgentConfig::from_json(r#"{"collapsing": {"never_collapse": ["WeatherTools"]}}"#)?;
/// let expected = CollapsingConfig::default().with_never_collapse("WeatherTools");
/// assert_eq!(config.collapsing, expected);
/// # Ok::<(), hpd_agent::config::ConfigError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
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
    /// `keep_expansions_across_turns`, default `false`; the old key
    /// `persist_system_prompt_injections` is read for one release, and written as the new one).
    pub keep_expansions_across_turns: bool,
    /// How requests carry collapsed harnesses (JSON `layout`, default
    /// [`CollapsingLayout::Native`]); see [`CollapsingLayout`] for each layout and what it
    /// costs. The seed's key `cache_stable: true` is read as `"layout": "append"`.
    pub layout: CollapsingLayout,
    /// Opening ahead of the model (JSON `open_ahead`: a number, `true` for [`DEFAULT_OPEN_AHEAD`],
    /// or `false`; default [`DEFAULT_OPEN_AHEAD`]): before the first request of a turn, the
    /// containers are ranked against the user's message (BM25 over one small document per
    /// container, its name and description, and one per member, its harness's name, its own
    /// name, description and parameters; a container scores as its best document), and the
    /// best-ranked ([`OPEN_AHEAD_MAX`]) is opened for the model when it scores at least this, so that it needs
    /// no container round trip: in `fixed` the container's answer is added to the user's message;
    /// in `native` the history gets the container call and its result, as if the model had made it.
    /// Only in `fixed`, and in `native` with tool references or tool additions, whose openings
    /// append to the conversation and so keep the cached prefix; a container whose members the
    /// conversation already holds is not opened again. `None` is off. On by default, with
    /// [`container_notes`](Self::container_notes), because of what the two did together on the
    /// one model that calls tools the repository could measure (`BENCHMARKS.md`, "Accuracy on a
    /// real model"): in `fixed` on Qwen2.5-Coder-1.5B, 43 of 45 tasks solved with both in each of
    /// three runs once the ranking read names' word pairs ("Seventeenth run", "Eighteenth run";
    /// 41 in each of two runs before it, 38 or 39 in five runs of earlier rankings) against 19
    /// without either (42 flat); and at this score a wrong opening is rare (none of the 45
    /// tasks, none of 12 messages that need no tool), while a missed one only costs the round
    /// trip the model would have made anyway. A wrong opening costs its schemas' tokens for
    /// the rest of the session, and how often the best-ranked container is the right one
    /// depends on how a catalog describes its harnesses and how users ask: `BENCHMARKS.md`
    /// ("Session cost per collapsing layout") gives what the default costs against plain
    /// `fixed` and flat.
    pub open_ahead: Option<f64>,
    /// Container answers as notes (JSON `container_notes`, default `true`; in `fixed` (and
    /// `native` where it runs as `fixed`), `hide` and `append`, the layouts whose container
    /// results are text; in the native forms a container's result is what loads its members,
    /// and stays): when every call of a model's response is
    /// answered by the layout without running a function (a container opened, a container
    /// called again, a member recovered), the conversation gets one note in the user's turn
    /// in place of those calls and their results: the names of the containers, their answers
    /// (the members' schemas) and the user's message again, as opening ahead writes it. In
    /// `fixed` an answer there starts `<Harness>: call its functions through call_function,
    /// as {...}:` and leaves out the container result's first line with its list of members
    /// (the note names the container, and each schema line a member), which a later request
    /// would otherwise read again: over 50 turns of 20 synthetic harnesses in turn, the
    /// default went from 1.057x to 1.034x flat's billed input (`BENCHMARKS.md`, "Notes
    /// without the list of names"). The
    /// calls still get their results (`ToolCallCompleted` events, middleware, traces); only
    /// the history holds the note instead. A small model shown its own container call tends to
    /// make it again (`BENCHMARKS.md`, "Accuracy on a real model"); with the note it reads the
    /// schemas as given and calls the member. Each note (and each opening ahead, in `fixed`)
    /// ends with a hint: the members that fit the user's message best (BM25 over the members'
    /// names, counted twice, with their words side by side as pairs, their descriptions and
    /// their parameters' names and descriptions, not the harness's own name; every member
    /// scoring at least half as well as the best, up to three, a deprecated one left out when another qualifies), each with the whole call
    /// that runs it, its required arguments outlined with placeholders and its optional ones
    /// named: through [`CALL_TOOL`] in `fixed`, and in `hide` and `append`, where the opened
    /// members are in the next request's tool list, by the member's own name (with notes on,
    /// those layouts check a member's arguments against its schema too, so that a placeholder
    /// sent back is refused before the member runs). One member is named alone; several are listed with the first sentence of their
    /// descriptions for the model to choose. A small model runs a member named alone even
    /// when the request asks for another, so a wrong single name costs the task (`BENCHMARKS.md`,
    /// "Seventh run"); given a short list, it chose the needed member where one name had led
    /// it away in two tasks and the wrong one of two in another, for the same count of tasks
    /// solved (`BENCHMARKS.md`, "Tenth run"). When the model opened a container that fits the
    /// message less than half as well as another that ranks first and reaches the
    /// [`open_ahead`](Self::open_ahead) score (the default's when it is off), the note names
    /// that other container and the call that opens it: in `hide` and `append`, which never
    /// open ahead, a small model chose the container itself and read a knowledge graph's
    /// resources for "Show the directory tree of ..." (`BENCHMARKS.md`, "Seventeenth run").
    /// The assistant's text of that response, if any, stays. The history stays append-only, so the cached prefix is
    /// kept (in `hide` and `append` the tool list still changes with the opening, as it
    /// always does there). On by default (see [`open_ahead`](Self::open_ahead) for the
    /// figures; on the same model, plain `append` solved none of the 45 tasks
    /// and `append` with notes 42 of 45, `hide` with notes 43 of 45, and plain
    /// `hide` 1 of 6 where `hide` with notes solved 5 of the same 6: `BENCHMARKS.md`,
    /// "Thirteenth run" to "Seventeenth run");
    /// `false` gives the
    /// layouts as such, whose container calls and results stay in the history as the model
    /// made them.
    pub container_notes: bool,
}

/// The score [`CollapsingConfig::open_ahead`] takes for `"open_ahead": true` and
/// [`CollapsingConfig::with_open_ahead_default`].
///
/// ```
/// assert_eq!(hpd_agent::config::DEFAULT_OPEN_AHEAD, 5.0);
/// ```
///
/// Chosen from the repository's `open_ahead` benchmark (`BENCHMARKS.md`, "Function words and
/// plurals"): on the 45 tasks of the accuracy harness over six MCP servers, the best-ranked
/// container scored 5 or more in all 45 and was the one the task needed in 44 ("Show the directory
/// tree of ..." ranks Git's "working tree" first), and none of the bench's 12 messages that need no
/// tool reached it; at 4, two of the 12 did, and at 6, 42 tasks opened the container they needed.
/// (Before function words were left out of the ranking, every score was higher and the default was
/// 6: `BENCHMARKS.md`, "Ninth run".) An opening for a message that needs no tool costs its schemas'
/// tokens (about 1,400 on that catalog); a missed one costs the model's container round trip. BM25
/// scores grow with the number of documents ranked (about one per member), so a catalog much
/// smaller or larger than that one's 51 functions may want a score of its own; the bench prints the
/// figures per threshold for any catalog it is pointed at.
pub const DEFAULT_OPEN_AHEAD: f64 = 5.0;

/// The most containers one turn opens ahead of the model: the best-ranked one. In the
/// repository's `open_ahead` benchmark the second-ranked container was almost never the one a
/// task needed, and its schemas only added tokens.
///
/// ```
/// assert_eq!(hpd_agent::config::OPEN_AHEAD_MAX, 1);
/// ```
pub const OPEN_AHEAD_MAX: usize = 1;

impl Default for CollapsingConfig {
    /// `enabled: true`, `never_collapse: []`, `recovery: true`,
    /// `execute_recovered_calls: false`, `keep_expansions_across_turns: false`,
    /// `layout: native`, `open_ahead: Some(DEFAULT_OPEN_AHEAD)`, `container_notes: true`.
    fn default() -> Self {
        CollapsingConfig {
            enabled: true,
            never_collapse: Vec::new(),
            recovery: true,
            execute_recovered_calls: false,
            keep_expansions_across_turns: false,
            layout: CollapsingLayout::Native,
            open_ahead: Some(DEFAULT_OPEN_AHEAD),
            container_notes: true,
        }
    }
}

impl CollapsingConfig {
    /// Sets [`enabled`](Self::enabled): `false` turns collapsing off.
    ///
    /// ```
    /// let collapsing = hpd_agent::config::CollapsingConfig::default().with_enabled(false);
    /// assert!(!collapsing.enabled);
    /// ```
    #[must_use]
    pub fn with_enabled(mut self, enabled: bool) -> Self {
        self.enabled = enabled;
        self
    }

    /// Adds a harness name to [`never_collapse`](Self::never_collapse), after those already
    /// there.
    ///
    /// ```
    /// let collapsing = hpd_agent::config::CollapsingConfig::default()
    ///     .with_never_collapse("WeatherTools")
    ///     .with_never_collapse("MathTools");
    /// assert_eq!(collapsing.never_collapse, ["WeatherTools", "MathTools"]);
    /// ```
    #[must_use]
    pub fn with_never_collapse(mut self, harness: impl Into<String>) -> Self {
        self.never_collapse.push(harness.into());
        self
    }

    /// Sets [`recovery`](Self::recovery).
    ///
    /// ```
    /// let collapsing = hpd_agent::config::CollapsingConfig::default().with_recovery(false);
    /// assert!(!collapsing.recovery);
    /// ```
    #[must_use]
    pub fn with_recovery(mut self, recovery: bool) -> Self {
        self.recovery = recovery;
        self
    }

    /// Sets [`execute_recovered_calls`](Self::execute_recovered_calls).
    ///
    /// ```
    /// let collapsing = hpd_agent::config::CollapsingConfig::default().with_execute_recovered_calls(true);
    /// assert!(collapsing.execute_recovered_calls);
    /// ```
    #[must_use]
    pub fn with_execute_recovered_calls(mut self, execute: bool) -> Self {
        self.execute_recovered_calls = execute;
        self
    }

    /// Sets [`keep_expansions_across_turns`](Self::keep_expansions_across_turns).
    ///
    /// ```
    /// let collapsing =
    ///     hpd_agent::config::CollapsingConfig::default().with_keep_expansions_across_turns(true);
    /// assert!(collapsing.keep_expansions_across_turns);
    /// ```
    #[must_use]
    pub fn with_keep_expansions_across_turns(mut self, keep: bool) -> Self {
        self.keep_expansions_across_turns = keep;
        self
    }

    /// Sets [`layout`](Self::layout).
    ///
    /// ```
    /// use hpd_agent::config::{CollapsingConfig, CollapsingLayout};
    ///
    /// let collapsing = CollapsingConfig::default().with_layout(CollapsingLayout::Native);
    /// assert_eq!(collapsing.layout, CollapsingLayout::Native);
    /// ```
    #[must_use]
    pub fn with_layout(mut self, layout: CollapsingLayout) -> Self {
        self.layout = layout;
        self
    }

    /// Sets [`open_ahead`](Self::open_ahead): containers scoring at least `score` against the
    /// user's message are opened before the turn's first request.
    ///
    /// ```
    /// let collapsing = hpd_agent::config::CollapsingConfig::default().with_open_ahead(3.5);
    /// assert_eq!(collapsing.open_ahead, Some(3.5));
    /// ```
    #[must_use]
    pub fn with_open_ahead(mut self, score: f64) -> Self {
        self.open_ahead = Some(score);
        self
    }

    /// Sets [`open_ahead`](Self::open_ahead) to [`DEFAULT_OPEN_AHEAD`].
    ///
    /// ```
    /// use hpd_agent::config::{CollapsingConfig, DEFAULT_OPEN_AHEAD};
    ///
    /// let collapsing = CollapsingConfig::default().with_open_ahead_default();
    /// assert_eq!(collapsing.open_ahead, Some(DEFAULT_OPEN_AHEAD));
    /// ```
    #[must_use]
    pub fn with_open_ahead_default(self) -> Self {
        self.with_open_ahead(DEFAULT_OPEN_AHEAD)
    }

    /// Turns [`open_ahead`](Self::open_ahead) off.
    ///
    /// ```
    /// let collapsing = hpd_agent::config::CollapsingConfig::default()
    ///     .with_open_ahead(3.5)
    ///     .without_open_ahead();
    /// assert_eq!(collapsing.open_ahead, None);
    /// ```
    #[must_use]
    pub fn without_open_ahead(mut self) -> Self {
        self.open_ahead = None;
        self
    }

    /// Sets [`container_notes`](Self::container_notes).
    ///
    /// ```
    /// let collapsing = hpd_agent::config::CollapsingConfig::default().with_container_notes(true);
    /// assert!(collapsing.container_notes);
    /// ```
    #[must_use]
    pub fn with_container_notes(mut self, notes: bool) -> Self {
        self.container_notes = notes;
        self
    }

    /// Whether this is [`CollapsingConfig::default()`] (then serialization leaves it out).
    ///
    /// # Examples
    ///
    /// ```
    /// use hpd_agent::config::CollapsingConfig;
    ///
    /// assert!(CollapsingConfig::default().is_default());
    /// let mut off = CollapsingConfig::default();
    /// off.enabled = false;
    /// assert!(!off.is_default());
    /// ```
    #[must_use]
    pub fn is_default(&self) -> bool {
        *self == CollapsingConfig::default()
    }
}

/// How requests carry collapsed harnesses (JSON `collapsing.layout`).
///
/// Every layout keeps the same calls working (containers, members, qualified names, recovery,
/// middleware, limits, events); they differ in what the tool list and the system text of each
/// request hold, and so in what a provider's prompt cache can reuse. A provider caches the
/// longest unchanged prefix of a request (tools, then system text, then the conversation):
/// whatever follows the first change is billed again in full.
///
/// | layout | tool list | system prompts of expanded containers | cache across an expansion |
/// |---|---|---|---|
/// | `hide` | containers; an expanded one is replaced by its members at the end | appended to the system text | lost from the first tool on |
/// | `append` | containers stay; members of expanded ones are appended | carried by call results | kept up to the appended members |
/// | `fixed` | never changes: plain tools, containers, and the call tool [`CALL_TOOL`] | carried by call results | kept whole |
/// | `native` | the provider's own deferred loading; `fixed` where it has none | carried by call results | kept whole |
///
/// In `fixed`, a container call answers with its members' names, descriptions and full
/// parameter schemas (and its `function_result` and `system_prompt` texts); the model then calls
/// a member through [`CALL_TOOL`] with `{"name": "<member>", "arguments": {...}}`. Such a call
/// takes exactly the path of a direct call of the member, after its arguments are checked
/// against the member's JSON Schema (with the `argument-validation` feature, on by default; a
/// mismatch is answered with the JSON path of the first mismatch, and nothing runs; a `null`
/// written for an optional parameter whose schema rejects `null` is dropped first, as if the
/// key were absent). A member
/// called directly by its name works too (recovery expands its container first when needed).
///
/// In `native`, the members are sent as deferred tools the provider loads when a container is
/// called, in the form the chat client names ([`ChatClient::deferred_tools`](crate::ChatClient::deferred_tools),
/// a per-client setting a config names as `model.deferred_tools`):
///
/// | form | provider | how a container call loads its members | members are called |
/// |---|---|---|---|
/// | [`ToolReferences`](crate::chat::DeferredTools::ToolReferences) | Anthropic | `tool_reference` blocks in its result (members declared `defer_loading`) | by their own names |
/// | [`ToolAdditions`](crate::chat::DeferredTools::ToolAdditions) | Anthropic (beta `mid-conversation-tool-changes-2026-07-01`) | a `{"role": "system"}` message of `tool_addition` blocks after its result (members declared `defer_loading`, `strict` where their schema qualifies) | by their own names |
/// | [`ToolSearch`](crate::chat::DeferredTools::ToolSearch) | OpenAI Responses | the container is a `namespace`, loaded by a client-executed `tool_search` | by their own names within the namespace |
/// | [`AdditionalTools`](crate::chat::DeferredTools::AdditionalTools) | OpenAI Responses | an `additional_tools` item (role `developer`) after its result, with the members' definitions (`strict` where their schema qualifies) | by their own names |
///
/// In every form the container is an ordinary tool of the list (in `ToolSearch`, a namespace)
/// and its result carries its `function_result` and system prompt. The history records what a
/// result loaded as the [`references`](crate::ChatMessage::Tool) of that result, in no
/// provider's form: each client writes them in its own form when it sends the history, so a
/// stored session resumes on another client or form, and a member loaded once is known to be
/// loaded on every later request. In the two addition forms, the addition follows the results
/// of the whole response (one message or item, after the last of them), since the results of
/// one response must stay together. Providers without a form (Chat Completions servers,
/// llama.cpp, a Messages or Responses server whose client sets none) get `fixed`, and the agent
/// says so once when it is built, in an [`AgentEvent::LayoutFallback`](crate::AgentEvent) and
/// in the log. Which hosts and models have a form by default is documented on
/// `AnthropicClient::with_deferred_tools` and `OpenAiResponsesClient::with_deferred_tools`;
/// the setting always wins over that default, so a proxy or gateway can turn a form on.
///
/// **Across turns.** When a turn ends, every container collapses: its scoped middleware is
/// dropped, and in `hide` and `append` its members leave the tool list, so a later call of one
/// of them is a recovery (the container expands again; the call runs at once only with
/// [`execute_recovered_calls`](CollapsingConfig::execute_recovered_calls)). In `fixed` and
/// `native`, what is loaded stays loaded: the results of container calls stay in the
/// conversation (with the member schemas in `fixed`, and in `native` with the references
/// through which the provider loaded the member definitions), so the model keeps seeing those
/// definitions, and a later call of such a member, through [`CALL_TOOL`] or by its own name,
/// runs at once: its container expands again for it (a fresh scoped pipeline; the
/// `system_prompt` in the result only when the conversation no longer holds it), with no
/// recovery answer. Only a member whose definition the model has not seen (its container never
/// opened in the session, or the context budget trimmed that result away) is recovered there.
/// [`keep_expansions_across_turns`](CollapsingConfig::keep_expansions_across_turns) on keeps
/// expansions and the same scoped middleware instances for the session: in `hide` and `append`
/// the members stay in the tool list, and in `fixed` and `native` members run even after the
/// context budget trimmed their definitions away. In `fixed` and `native` the tool list does
/// not depend on expansions, so neither setting costs any cache.
///
/// **Which one.** The default is `native`: a client's own deferred loading where it has one
/// (by default the Anthropic client on `api.anthropic.com`, and the Responses client on
/// `api.openai.com` for `gpt-5.4` and later; any client whose `deferred_tools` is set), and
/// `fixed` on every other client, which is what the default gives on OpenAI Chat Completions
/// servers, llama.cpp and the scripted client. Chosen from the repository's `session_cost`
/// benchmark (`BENCHMARKS.md`), with a model that calls what the history already loaded: on
/// both catalogs and at every length, tool references cost no more than `fixed` (20 turns of
/// the cycling workload on 20 synthetic harnesses: 1.010x flat with tool references, 1.012x
/// with `fixed`, 1.050x with the Responses namespaces, which add a namespace to the history
/// at each load, Anthropic's rule; with a few harnesses of many, the namespaces cost least);
/// the native forms keep every request a continuation of the last, and the model calls members
/// by their own names with their own schemas, the surface the vendors train on, instead of
/// through [`CALL_TOOL`].
/// `fixed` works with every provider and keeps at least 99.6% of each request cached; it costs
/// less than `hide` on every catalog from five turns on. `hide`, the seed's layout, stays one
/// setting away (`"layout": "hide"`, or `cache_stable: false`, the seed's name for it): choose
/// it for a model that calls members through [`CALL_TOOL`] less reliably than by their own
/// names, which only a run of the repository's accuracy harness on that model can tell. For a
/// small catalog whose every harness a long session keeps using, turn collapsing off. The
/// default settings also open ahead (in `fixed` and in `native` with tool references or
/// additions) and, in `fixed`, `hide` and `append`, answer container calls in notes: see
/// [`CollapsingConfig::open_ahead`] and [`CollapsingConfig::container_notes`] for what they
/// cost and why they are on.
///
/// ```
/// use hpd_agent::AgentConfig;
/// use hpd_agent::config::CollapsingLayout;
///
/// let config = AgentConfig::from_json(r#"{"collapsing": {"layout": "fixed"}}"#)?;
/// assert_eq!(config.collapsing.layout, CollapsingLayout::Fixed);
/// // The seed's key still works.
/// let config = AgentConfig::from_json(r#"{"collapsing": {"cache_stable": true}}"#)?;
/// assert_eq!(config.collapsing.layout, CollapsingLayout::Append);
/// assert_eq!("native".parse::<CollapsingLayout>(), Ok(CollapsingLayout::Native));
/// # Ok::<(), hpd_agent::config::ConfigError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CollapsingLayout {
    /// An expanded container leaves the tool list and its members are appended; its system
    /// prompt is appended to the system text. The seed's layout (its default before `fixed`).
    Hide,
    /// Containers stay where they are; members of expanded containers are appended after every
    /// other tool, and system prompts travel in call results (the seed's `cache_stable`).
    Append,
    /// The tool list never changes: plain tools, one tool per container, and [`CALL_TOOL`].
    /// What the default gives on a client without deferred loading.
    Fixed,
    /// The provider's own deferred tool loading, or `fixed` where the provider has none. The
    /// default.
    #[default]
    Native,
}

/// The name of the call tool of the [`fixed`](CollapsingLayout::Fixed) layout: it takes a
/// member's `name` and its `arguments` object and calls that member.
///
/// ```
/// assert_eq!(hpd_agent::config::CALL_TOOL, "call_function");
/// ```
pub const CALL_TOOL: &str = "call_function";

impl CollapsingLayout {
    /// Every layout, in the order of the table above.
    pub const ALL: [CollapsingLayout; 4] = [
        CollapsingLayout::Hide,
        CollapsingLayout::Append,
        CollapsingLayout::Fixed,
        CollapsingLayout::Native,
    ];

    /// The JSON name: `hide`, `append`, `fixed` or `native`.
    ///
    /// ```
    /// use hpd_agent::config::CollapsingLayout;
    ///
    /// assert_eq!(CollapsingLayout::Append.as_str(), "append");
    /// assert_eq!(CollapsingLayout::Fixed.to_string(), "fixed");
    /// ```
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            CollapsingLayout::Hide => "hide",
            CollapsingLayout::Append => "append",
            CollapsingLayout::Fixed => "fixed",
            CollapsingLayout::Native => "native",
        }
    }
}

impl std::fmt::Display for CollapsingLayout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A layout name that is not one of `hide`, `append`, `fixed`, `native`.
///
/// ```
/// use hpd_agent::config::CollapsingLayout;
///
/// let error = "flat".parse::<CollapsingLayout>().unwrap_err();
/// assert_eq!(error.to_string(), "unknown collapsing layout 'flat'; expected one of hide, append, fixed, native");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown collapsing layout '{0}'; expected one of hide, append, fixed, native")]
pub struct UnknownLayout(pub String);

impl std::str::FromStr for CollapsingLayout {
    type Err = UnknownLayout;

    /// Parses a JSON name, in any case.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        CollapsingLayout::ALL
            .into_iter()
            .find(|l| l.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| UnknownLayout(s.to_owned()))
    }
}

impl serde::Serialize for CollapsingLayout {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for CollapsingLayout {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}
