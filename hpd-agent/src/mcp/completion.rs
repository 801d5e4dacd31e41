//! Completion of prompt arguments and resource-template variables (`completion/complete`):
//! what a server's [`Completer`] is asked and answers.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use super::ProviderError;

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;
type CompleteFn =
    Arc<dyn Fn(CompletionRequest) -> BoxFuture<Result<Vec<String>, ProviderError>> + Send + Sync>;

/// What a completer is asked: the argument (or template variable) being filled in, the text
/// typed so far, and the values of the other arguments already chosen.
///
/// ```
/// use hpd_agent::mcp::CompletionRequest;
///
/// let request = CompletionRequest::new("city", "par");
/// assert_eq!((request.argument.as_str(), request.value.as_str()), ("city", "par"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CompletionRequest {
    /// The argument's (or variable's) name.
    pub argument: String,
    /// What has been typed so far.
    pub value: String,
    /// Other arguments already chosen.
    pub context: BTreeMap<String, String>,
}

impl CompletionRequest {
    /// A request for `argument` with what was typed so far, without context.
    #[must_use]
    pub fn new(argument: impl Into<String>, value: impl Into<String>) -> Self {
        CompletionRequest {
            argument: argument.into(),
            value: value.into(),
            context: BTreeMap::new(),
        }
    }

    /// Adds the value of another argument already chosen.
    ///
    /// ```
    /// use hpd_agent::mcp::CompletionRequest;
    ///
    /// let request = CompletionRequest::new("city", "P").with_context("country", "France");
    /// assert_eq!(request.context["country"], "France");
    /// ```
    #[must_use]
    pub fn with_context(mut self, argument: impl Into<String>, value: impl Into<String>) -> Self {
        self.context.insert(argument.into(), value.into());
        self
    }
}

/// Suggests values for a prompt argument or a resource-template variable
/// (`completion/complete`). The server sends at most 100 values, with the total and
/// `hasMore` when there are more.
///
/// ```
/// use hpd_agent::mcp::{Completer, CompletionRequest};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), hpd_agent::mcp::ProviderError> {
/// let cities = Completer::values(["Paris", "Parma", "Berlin"]);
/// assert_eq!(cities.complete(CompletionRequest::new("city", "par")).await?, ["Paris", "Parma"]);
/// let numbers = Completer::new(|request| async move {
///     Ok((1..=3).map(|n| format!("{}{n}", request.value)).collect())
/// });
/// assert_eq!(numbers.complete(CompletionRequest::new("id", "7")).await?, ["71", "72", "73"]);
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Completer(CompleteFn);

impl std::fmt::Debug for Completer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Completer")
    }
}

impl Completer {
    /// Completion computed by `complete`, most relevant value first.
    pub fn new<F, Fut>(complete: F) -> Self
    where
        F: Fn(CompletionRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<String>, ProviderError>> + Send + 'static,
    {
        Completer(Arc::new(move |request| Box::pin(complete(request))))
    }

    /// Completion from a fixed list: the values that start with what was typed, ignoring
    /// case, in the list's order.
    pub fn values<I, S>(values: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let values: Arc<[String]> = values.into_iter().map(Into::into).collect();
        Completer::new(move |request| {
            let typed = request.value.to_lowercase();
            let found = values
                .iter()
                .filter(|value| value.to_lowercase().starts_with(&typed))
                .cloned()
                .collect();
            std::future::ready(Ok(found))
        })
    }

    /// Runs the completer.
    ///
    /// # Errors
    ///
    /// Whatever the completer returns.
    pub async fn complete(&self, request: CompletionRequest) -> Result<Vec<String>, ProviderError> {
        (self.0)(request).await
    }
}
