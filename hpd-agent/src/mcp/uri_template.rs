//! Matching URIs against the URI templates of resource templates (RFC 6570, the two forms MCP
//! servers use for resources: `{name}` and `{+name}`).
//!
//! Hand-written: the URI template crates expand templates, and a server needs the reverse,
//! reading the variables out of a URI a client asks for.

use std::collections::BTreeMap;

/// One piece of a parsed template.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    /// A variable; `reserved` (`{+name}`) values may contain `/`.
    Variable {
        name: String,
        reserved: bool,
    },
}

/// A parsed URI template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UriTemplate {
    parts: Vec<Part>,
}

impl UriTemplate {
    /// Parses `template`; the error says what is wrong with it.
    pub(crate) fn parse(template: &str) -> Result<Self, String> {
        let mut parts = Vec::new();
        let mut rest = template;
        while !rest.is_empty() {
            match rest.find('{') {
                Some(0) => {
                    let Some(end) = rest.find('}') else {
                        return Err(format!(
                            "the URI template '{template}' has an unclosed '{{'"
                        ));
                    };
                    let expression = &rest[1..end];
                    let (reserved, name) = match expression.strip_prefix('+') {
                        Some(name) => (true, name),
                        None => (false, expression),
                    };
                    if name.is_empty()
                        || !name
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
                    {
                        return Err(format!(
                            "the URI template '{template}' has the expression '{{{expression}}}'; only {{name}} and {{+name}} are supported"
                        ));
                    }
                    if matches!(parts.last(), Some(Part::Variable { .. })) {
                        return Err(format!(
                            "the URI template '{template}' has two variables with nothing between them"
                        ));
                    }
                    if parts.iter().any(
                        |part| matches!(part, Part::Variable { name: other, .. } if other == name),
                    ) {
                        return Err(format!(
                            "the URI template '{template}' names the variable '{name}' twice"
                        ));
                    }
                    parts.push(Part::Variable {
                        name: name.to_owned(),
                        reserved,
                    });
                    rest = &rest[end + 1..];
                }
                found => {
                    let end = found.unwrap_or(rest.len());
                    let literal = &rest[..end];
                    if literal.contains('}') {
                        return Err(format!("the URI template '{template}' has a stray '}}'"));
                    }
                    parts.push(Part::Literal(literal.to_owned()));
                    rest = &rest[end..];
                }
            }
        }
        if !parts
            .iter()
            .any(|part| matches!(part, Part::Variable { .. }))
        {
            return Err(format!(
                "the URI template '{template}' has no variable; register it as a resource instead"
            ));
        }
        Ok(UriTemplate { parts })
    }

    /// The names of the template's variables, in order.
    pub(crate) fn variables(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|part| match part {
            Part::Variable { name, .. } => Some(name.as_str()),
            Part::Literal(_) => None,
        })
    }

    /// The variables of `uri` when it matches, percent-decoded. A variable takes the shortest
    /// non-empty text up to the literal that follows it (`{name}` never takes a `/`).
    pub(crate) fn matches(&self, uri: &str) -> Option<BTreeMap<String, String>> {
        let mut variables = BTreeMap::new();
        let mut rest = uri;
        let mut parts = self.parts.iter().peekable();
        while let Some(part) = parts.next() {
            match part {
                Part::Literal(literal) => rest = rest.strip_prefix(literal.as_str())?,
                Part::Variable { name, reserved } => {
                    let end = match parts.peek() {
                        Some(Part::Literal(next)) => rest.get(1..)?.find(next.as_str())? + 1,
                        _ => rest.len(),
                    };
                    let value = &rest[..end];
                    if value.is_empty() || (!reserved && value.contains('/')) {
                        return None;
                    }
                    variables.insert(name.clone(), percent_decode(value));
                    rest = &rest[end..];
                }
            }
        }
        rest.is_empty().then_some(variables)
    }
}

/// `%XX` sequences decoded; a sequence that is not valid (or not UTF-8) stays as it is.
fn percent_decode(value: &str) -> String {
    if !value.contains('%') {
        return value.to_owned();
    }
    let bytes = value.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(high), Some(low)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            decoded.push((high * 16 + low) as u8);
            i += 3;
        } else {
            decoded.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(decoded).unwrap_or_else(|_| value.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn simple_variables_match_one_segment() {
        let template = UriTemplate::parse("test://template/{id}/data").unwrap();
        assert_eq!(
            template.matches("test://template/123/data"),
            Some(vars(&[("id", "123")]))
        );
        assert_eq!(template.matches("test://template/1/2/data"), None);
        assert_eq!(template.matches("test://template//data"), None);
        assert_eq!(template.matches("test://template/123/other"), None);
        assert_eq!(template.variables().collect::<Vec<_>>(), ["id"]);
    }

    #[test]
    fn reserved_variables_take_slashes_and_values_are_decoded() {
        let template = UriTemplate::parse("file:///{+path}").unwrap();
        assert_eq!(
            template.matches("file:///a/b%20c.txt"),
            Some(vars(&[("path", "a/b c.txt")]))
        );
        let two = UriTemplate::parse("db://{table}/{row}").unwrap();
        assert_eq!(
            two.matches("db://users/42"),
            Some(vars(&[("table", "users"), ("row", "42")]))
        );
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%zz"), "%zz");
    }

    #[test]
    fn bad_templates_are_refused_with_the_reason() {
        for (template, says) in [
            ("test://{id", "unclosed"),
            ("test://{?q}", "only {name} and {+name}"),
            ("test://{a}{b}", "nothing between them"),
            ("test://{a}/{a}", "twice"),
            ("test://static", "no variable"),
            ("test://x}", "stray"),
        ] {
            let error = UriTemplate::parse(template).unwrap_err();
            assert!(error.contains(says), "{template}: {error}");
        }
    }
}
