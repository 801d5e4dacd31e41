//! Hiding credentials: passwords in addresses (store URLs, MCP server URLs) before they are shown.

/// A store address safe to show: the password of a URL (`scheme://user:password@host`) or of a
/// `password=...` setting is replaced by `***`.
///
/// ```
/// use hpd_agent::store::redact_url;
/// assert_eq!(redact_url("postgres://app:s3cret@db:5432/x"), "postgres://app:***@db:5432/x");
/// assert_eq!(redact_url("redis://:s3cret@cache/0"), "redis://:***@cache/0");
/// assert_eq!(redact_url("host=db password=s3cret user=app"), "host=db password=*** user=app");
/// ```
#[must_use]
pub fn redact_url(url: &str) -> String {
    if let Some(scheme_end) = url.find("://") {
        let rest = &url[scheme_end + 3..];
        let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let authority = &rest[..authority_end];
        let mut out = url.to_owned();
        if let Some(at) = authority.rfind('@')
            && let Some(colon) = authority[..at].find(':')
        {
            let start = scheme_end + 3 + colon + 1;
            let end = scheme_end + 3 + at;
            out.replace_range(start..end, "***");
        }
        return redact_query_password(&out);
    }
    redact_key_values(url)
}

/// The password of a URL or `password=` setting, as written (to scrub it from driver messages).
#[cfg_attr(
    not(any(feature = "postgres", feature = "redis", feature = "mcp")),
    allow(dead_code)
)]
pub(crate) fn url_password(url: &str) -> Option<&str> {
    let redacted = redact_url(url);
    // The password is what `redact_url` replaced: the text between the common prefix and the
    // common suffix of the two strings.
    let prefix = url
        .bytes()
        .zip(redacted.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    let suffix = url
        .bytes()
        .rev()
        .zip(redacted.bytes().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let end = url.len().checked_sub(suffix)?;
    (prefix < end).then(|| url.get(prefix..end)).flatten()
}

/// `?password=x` query parameters.
fn redact_query_password(url: &str) -> String {
    let Some(query_start) = url.find('?') else {
        return url.to_owned();
    };
    let (head, query) = url.split_at(query_start + 1);
    let parts: Vec<String> = query
        .split('&')
        .map(|part| match part.split_once('=') {
            Some((key, _)) if key.eq_ignore_ascii_case("password") => format!("{key}=***"),
            _ => part.to_owned(),
        })
        .collect();
    format!("{head}{}", parts.join("&"))
}

/// `key=value` settings separated by spaces (libpq's form).
fn redact_key_values(text: &str) -> String {
    text.split(' ')
        .map(|part| match part.split_once('=') {
            Some((key, _)) if key.trim().eq_ignore_ascii_case("password") => format!("{key}=***"),
            _ => part.to_owned(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}
