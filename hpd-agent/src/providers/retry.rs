//! When and how long to wait before a request is sent again: [`RetryPolicy`] and
//! [`retry_after`].
//!
//! Every HTTP provider of this crate retries HTTP 429, HTTP 5xx (Anthropic's 529 "overloaded"
//! included), failures to connect and connections the server closed or reset before it answered
//! (a pooled keep-alive connection closed under the request: the retry gets a fresh
//! connection), with exponential backoff and jitter, and honours the
//! provider's own wait (`retry-after-ms`, or `Retry-After` in seconds or as an HTTP date),
//! capped at the maximum backoff.
//!
//! ```
//! use std::time::Duration;
//! use hpd_agent::providers::retry::RetryPolicy;
//!
//! let policy = RetryPolicy::default();
//! assert_eq!(policy.max_retries, 3);
//! assert!(policy.is_retryable_status(429) && policy.is_retryable_status(529));
//! assert!(!policy.is_retryable_status(400));
//! // The server's wait wins over the computed backoff, capped at the maximum.
//! assert_eq!(policy.delay(0, Some(Duration::from_secs(2))), Duration::from_secs(2));
//! assert_eq!(policy.delay(0, Some(Duration::from_secs(600))), policy.max_backoff);
//! ```

use std::time::{Duration, SystemTime};

use backon::BackoffBuilder as _;
use reqwest::header::{HeaderMap, RETRY_AFTER};

/// How often and how long to wait before retrying a failed request.
///
/// Retry `n` (counting from 0) waits about `backoff * 2^n`, between half and all of it at
/// random ("equal jitter", so clients that failed together do not retry together), at most
/// `max_backoff`. A wait the server asks for replaces the computed one, capped at
/// `max_backoff` too.
///
/// ```
/// use std::time::Duration;
/// use hpd_agent::providers::openai::OpenAiClient;
/// use hpd_agent::providers::retry::RetryPolicy;
///
/// let policy = RetryPolicy { max_retries: 5, backoff: Duration::from_secs(1), ..RetryPolicy::default() };
/// assert_eq!(policy.max_backoff, Duration::from_secs(30));
/// let client = OpenAiClient::new("gpt-4o-mini", "sk-...")?.with_retry_policy(policy);
/// # drop(client);
/// # Ok::<(), hpd_agent::chat::ChatError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// How many times a request is sent again (0 never retries). Default 3.
    pub max_retries: u32,
    /// The first retry's delay. Default 500 ms.
    pub backoff: Duration,
    /// The longest wait between two attempts. Default 30 s.
    pub max_backoff: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 3,
            backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// Whether a response with this status is retried: 429 and every 5xx.
    ///
    /// ```
    /// use hpd_agent::providers::retry::RetryPolicy;
    ///
    /// assert!(RetryPolicy::default().is_retryable_status(503));
    /// assert!(!RetryPolicy::default().is_retryable_status(401));
    /// ```
    #[must_use]
    pub fn is_retryable_status(&self, status: u16) -> bool {
        status == 429 || (500..=599).contains(&status)
    }

    /// The wait before retry `attempt + 1`: `server_wait` when the server gave one, else the
    /// computed backoff; never more than `max_backoff`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use hpd_agent::providers::retry::RetryPolicy;
    ///
    /// let policy = RetryPolicy { backoff: Duration::from_millis(100), ..RetryPolicy::default() };
    /// let second = policy.delay(1, None);
    /// assert!(second >= Duration::from_millis(100) && second <= Duration::from_millis(200));
    /// ```
    #[must_use]
    pub fn delay(&self, attempt: u32, server_wait: Option<Duration>) -> Duration {
        if let Some(wait) = server_wait {
            return self.server_delay(wait);
        }
        // Past 128 doublings every delay is at the cap (a `Duration` holds less than 2^128
        // nanoseconds), so a larger attempt number draws from the same range.
        let attempt = usize::try_from(attempt.min(128)).unwrap_or(128);
        self.backoff_builder()
            .without_max_times()
            .build()
            .nth(attempt)
            .unwrap_or(self.max_backoff)
    }

    /// The wait the server asked for, capped at `max_backoff`.
    pub(crate) fn server_delay(&self, wait: Duration) -> Duration {
        wait.min(self.max_backoff)
    }

    /// The backoff of this policy as `backon` builds it: `max_retries` delays, each drawn in
    /// `[d, 2d)` by backon's jitter from `d = backoff * 2^n / 2` (capped at `max_backoff / 2`),
    /// which is the "half to all" equal jitter described above.
    pub(crate) fn backoff_builder(&self) -> backon::ExponentialBuilder {
        let first = self.backoff.min(self.max_backoff) / 2;
        backon::ExponentialBuilder::default()
            .with_jitter()
            .with_factor(2.0)
            .with_min_delay(first)
            .with_max_delay(self.max_backoff / 2)
            .with_max_times(usize::try_from(self.max_retries).unwrap_or(usize::MAX))
    }
}

/// The wait a response asks for before a retry: `retry-after-ms` (OpenAI), else `Retry-After`
/// as seconds or as an HTTP date (the time left until then; a date in the past is no wait).
/// `None` when there is no such header or it cannot be read.
///
/// ```
/// use std::time::Duration;
/// use reqwest::header::{HeaderMap, HeaderValue, RETRY_AFTER};
/// use hpd_agent::providers::retry::retry_after;
///
/// let mut headers = HeaderMap::new();
/// headers.insert(RETRY_AFTER, HeaderValue::from_static("2"));
/// assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
/// headers.insert(RETRY_AFTER, HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"));
/// assert_eq!(retry_after(&headers), Some(Duration::ZERO));
/// ```
#[must_use]
pub fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    retry_after_at(headers, SystemTime::now())
}

// Read here rather than by a crate: backon leaves a server's wait to the caller (its `adjust`
// hook is where this value goes), and the forms providers send are no one crate's: OpenAI's
// `retry-after-ms`, and fractional seconds in `Retry-After`, which RFC 9110 does not allow but
// providers send. The HTTP-date form is `httpdate`'s.
fn retry_after_at(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let text = |name: &str| headers.get(name)?.to_str().ok().map(str::trim);
    let seconds = |text: &str, scale: f64| {
        let value: f64 = text.parse().ok()?;
        Duration::try_from_secs_f64(value / scale).ok()
    };
    if let Some(wait) = text("retry-after-ms").and_then(|t| seconds(t, 1000.0)) {
        return Some(wait);
    }
    let value = text(RETRY_AFTER.as_str())?;
    if value.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return seconds(value, 1.0);
    }
    let date = httpdate::parse_http_date(value).ok()?;
    Some(date.duration_since(now).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn retry_after_reads_milliseconds_then_seconds_then_dates() {
        let mut headers = HeaderMap::new();
        assert_eq!(retry_after(&headers), None);
        headers.insert(RETRY_AFTER, HeaderValue::from_static("2"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert(RETRY_AFTER, HeaderValue::from_static("1.5"));
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(1500)));
        headers.insert("retry-after-ms", HeaderValue::from_static("150"));
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(150)));
        for bad in [
            "-1",
            "NaN",
            "inf",
            "1e300",
            "soon",
            "Wed, 32 Oct 2015 07:28:00 GMT",
        ] {
            let mut headers = HeaderMap::new();
            headers.insert(RETRY_AFTER, HeaderValue::from_static(bad));
            assert_eq!(retry_after(&headers), None, "{bad}");
        }
        let mut headers = HeaderMap::new();
        headers.insert(
            RETRY_AFTER,
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        let date = httpdate::parse_http_date("Wed, 21 Oct 2015 07:28:00 GMT").unwrap();
        let before = date - Duration::from_secs(7);
        assert_eq!(
            retry_after_at(&headers, before),
            Some(Duration::from_secs(7))
        );
        let after = date + Duration::from_secs(7);
        assert_eq!(retry_after_at(&headers, after), Some(Duration::ZERO));
    }

    #[test]
    fn backoff_doubles_with_jitter_and_is_capped() {
        let policy = RetryPolicy {
            max_retries: 3,
            backoff: Duration::from_millis(100),
            max_backoff: Duration::from_millis(350),
        };
        for _ in 0..50 {
            let first = policy.delay(0, None);
            assert!(first >= Duration::from_millis(50) && first <= Duration::from_millis(100));
            let second = policy.delay(1, None);
            assert!(second >= Duration::from_millis(100) && second <= Duration::from_millis(200));
            for attempt in [40, 128, u32::MAX] {
                let capped = policy.delay(attempt, None);
                assert!(
                    capped >= Duration::from_millis(175) && capped <= Duration::from_millis(350),
                    "{attempt}: {capped:?}"
                );
            }
        }
        assert_eq!(
            policy.delay(0, Some(Duration::from_secs(1))),
            Duration::from_millis(350)
        );
    }

    #[test]
    fn the_backoff_gives_one_delay_per_retry() {
        use backon::BackoffBuilder as _;
        for max_retries in [0, 1, 3] {
            let policy = RetryPolicy {
                max_retries,
                ..RetryPolicy::default()
            };
            let delays: Vec<Duration> = policy.backoff_builder().build().collect();
            assert_eq!(delays.len(), max_retries as usize);
            for (n, delay) in delays.iter().enumerate() {
                let full = policy.backoff * 2u32.pow(n as u32);
                assert!(*delay >= full / 2 && *delay <= full, "{n}: {delay:?}");
            }
        }
    }

    #[test]
    fn retryable_statuses() {
        let policy = RetryPolicy::default();
        for status in [429, 500, 502, 503, 529, 599] {
            assert!(policy.is_retryable_status(status), "{status}");
        }
        for status in [200, 400, 401, 404, 409, 413, 600] {
            assert!(!policy.is_retryable_status(status), "{status}");
        }
    }
}
