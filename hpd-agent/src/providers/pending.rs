//! The bookkeeping of stream decoders whose events name the part of the answer they continue
//! (a content block by index, an output item by id): the parts in the order they started,
//! each found again by its key, with the text and the tool-call argument fragments appended
//! to it; once the stream ends they are taken in that order.

/// One part of a streamed answer being assembled.
#[derive(Debug)]
pub(crate) struct Pending<H> {
    /// What started the part, with the key later events find it by.
    pub(crate) head: H,
    /// The streamed text (answer or reasoning).
    pub(crate) text: String,
    /// The argument fragments of a tool call, joined; `None` when none came.
    pub(crate) arguments: Option<String>,
}

impl<H> Pending<H> {
    /// Appends one fragment of the tool call's arguments.
    pub(crate) fn push_arguments(&mut self, fragment: &str) {
        append(&mut self.arguments, fragment);
    }
}

/// Appends `fragment` to `slot`, starting it when nothing came yet.
pub(crate) fn append(slot: &mut Option<String>, fragment: &str) {
    slot.get_or_insert_with(String::new).push_str(fragment);
}

/// The parts of a streamed answer, in the order they started.
#[derive(Debug)]
pub(crate) struct PendingCalls<H> {
    parts: Vec<Pending<H>>,
}

impl<H> Default for PendingCalls<H> {
    fn default() -> Self {
        PendingCalls { parts: Vec::new() }
    }
}

impl<H> PendingCalls<H> {
    /// Starts a part after the others, with its first text.
    pub(crate) fn start(&mut self, head: H, text: String) -> &mut Pending<H> {
        self.parts.push(Pending {
            head,
            text,
            arguments: None,
        });
        let last = self.parts.len() - 1;
        &mut self.parts[last]
    }

    /// The last started part whose head `matches`.
    pub(crate) fn find(&mut self, matches: impl Fn(&H) -> bool) -> Option<&mut Pending<H>> {
        self.parts.iter_mut().rev().find(|part| matches(&part.head))
    }

    /// The last started part whose head `matches`, else a new one headed by `head()`.
    pub(crate) fn find_or_start(
        &mut self,
        matches: impl Fn(&H) -> bool,
        head: impl FnOnce() -> H,
    ) -> &mut Pending<H> {
        match self.parts.iter().rposition(|part| matches(&part.head)) {
            Some(position) => &mut self.parts[position],
            None => self.start(head(), String::new()),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.parts.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }
}

impl<H> IntoIterator for PendingCalls<H> {
    type Item = Pending<H>;
    type IntoIter = std::vec::IntoIter<Pending<H>>;

    /// The parts in the order they started.
    fn into_iter(self) -> Self::IntoIter {
        self.parts.into_iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_found_by_key_and_taken_in_start_order() {
        let mut calls = PendingCalls::default();
        calls.start(1, "a".into());
        calls.start(2, String::new());
        // A key used again finds the part started last.
        calls.start(1, String::new()).push_arguments("{");
        calls.find(|&key| key == 1).unwrap().push_arguments("}");
        assert!(calls.find(|&key| key == 3).is_none());
        calls.find_or_start(|&key| key == 3, || 3).text.push('c');
        calls.find_or_start(|&key| key == 2, || 9).text.push('b');
        assert_eq!(calls.len(), 4);
        let parts: Vec<_> = calls
            .into_iter()
            .map(|p| (p.head, p.text, p.arguments))
            .collect();
        assert_eq!(
            parts,
            [
                (1, "a".to_owned(), None),
                (2, "b".to_owned(), None),
                (1, String::new(), Some("{}".to_owned())),
                (3, "c".to_owned(), None),
            ]
        );
    }
}
