//! Opening ahead of the model: before the first request of a turn, the containers are ranked
//! against the user's message, and the best-ranked one is opened for the model when it scores
//! well enough, so that it needs no container round trip.
//!
//! The ranking is Okapi BM25 (`k1` = 1.2, `b` = 0.75) over small documents: one per container
//! (its harness name and description) and one per member (the harness name, the member's name
//! twice, its description, and its top-level parameters' names and descriptions). A container
//! scores as its best document. Ranking members rather than whole containers keeps a large
//! harness from losing to a small one only by its length: with each container as one
//! document, BM25's length normalisation pushed the fourteen-member Filesystem server below Git
//! for "Show the directory tree" and SequentialThinking's one long description above Time for
//! "What is the current time", and the word counts over a whole catalog (the inverse document
//! frequency) tell common words from telling ones far better across some fifty members than
//! across six containers (`BENCHMARKS.md`, "Ninth run"). Names are split into
//! words at `_`, `-`, `.` and case changes (`read_text_file`, `getSum` give `read`, `text`,
//! `file`, `get`, `sum`); every word is lower-cased, words of one character are dropped, a
//! plural of four or more letters reads as its singular (`-s` off, `-ies` as `-y`, `-es` off
//! after a hissing ending), so that "files" finds `read_file` and "branches" `git_branch`,
//! and the verbs that requests and tool names use for the same action are read as one word
//! (`add`, `new`, `insert` and `make` as `create`; `remove` and `erase` as `delete`; `find` and
//! `lookup` as `search`), so that "add a relation" finds `create_relations`; "now" and
//! "currently" read as `current`, so that "What time is it now" finds `get_current_time`.
//! English function words (articles, prepositions, conjunctions, pronouns, auxiliary verbs and
//! question words: "the", "of", "at", "what", ...) are left out: they say nothing of a tool,
//! yet a catalog's descriptions hold them seldom enough that one of them weighed like a
//! telling word. Nothing else is folded: a stemmer (Snowball's English one) was tried and left
//! out (`BENCHMARKS.md`, "Stemming, tried and left out"), and the effect of the verb families,
//! the function words and the plurals is measured there too ("Verb families", "Function
//! words and plurals").
//! Beside its words, a name is indexed by its pairs of side-by-side words (`directory_tree`
//! gives the pair "directory tree"; a text without whitespace counts as a name), and a message
//! by its own pairs, after the folding above: a request that has a name's words side by side
//! and in its order ("Show the directory tree of ...") scores that name's document above one
//! that has the same words only one by one. Word by word, `git_show` (a short description
//! that says "show" three times, and "directory") ranked the Git server first for that
//! request, above the fourteen-member file-system server whose `directory_tree` it asks for;
//! pairs of a description are not indexed, since a description's words side by side say
//! less than a name's. A pair is one more term of the sums below, and adds nothing to a
//! document's length (`BENCHMARKS.md`, "Name pairs", has what it changed).
//! The score of a document is the sum over the message's words (and pairs) of
//! `idf(w) * tf(w) * (k1 + 1) / (tf(w) + k1 * (1 - b + b * len / avg_len))`, with
//! `idf(w) = ln(1 + (N - n(w) + 0.5) / (n(w) + 0.5))` over the `N` documents, `n(w)` of which
//! hold `w`, and a container's score is its best document's. A word every document holds adds
//! little; a word only one holds adds most. Scores grow with the number of documents (a rare
//! word's `idf` is about `ln N`), so a threshold suits catalogs of about the size it was
//! chosen on.
//!
//! Only the layouts whose opening appends to the conversation open ahead: `fixed`, and `native`
//! with tool references or tool additions. In `native` the opening is what the model's own
//! container call would have been, placed after the user's message: an assistant message
//! calling the container, and the container's result, which carries the references that load
//! its members. In `fixed` the container's answer (its members' schemas and instructions) is
//! added to the user's message instead, after a line naming the opened containers
//! (`OPENED_AHEAD`), and the user's text follows once more, so that the request, not a long
//! list of schemas, is what the model reads last. Shown a container call it did not make, a
//! model tends to make the same call again rather than call a member (Qwen2.5-Coder-1.5B did
//! so on 5 of 6 tasks; `BENCHMARKS.md` has what the other form changed). Either way every
//! earlier request stays a prefix of the next (the user's message is the newest one when it is
//! extended), and the history stays valid for every provider. `hide` and `append` would change
//! the tool list (so the cached prefix), and the Responses namespaces are opened by a search
//! the model makes; they never open ahead.

use std::collections::{HashMap, HashSet};

/// The BM25 index of a toolset's containers, or of one harness's members.
///
/// An inverted index: ranking a message visits only the documents that hold one of its
/// words, so a turn's ranking costs what the message's words occur in, not the size of the
/// catalog (opening ahead ranks every turn's message, and is on by default).
#[derive(Debug, Clone, Default)]
pub(crate) struct Ranker {
    /// Per document: its key (a harness or member index) and BM25's length normalisation
    /// of it.
    documents: Vec<Document>,
    /// Per word of some document: its inverse document frequency, and each document that
    /// holds it (its index in `documents`) with the word's count there, in document order.
    postings: HashMap<String, (f64, Vec<(usize, u32)>)>,
}

#[derive(Debug, Clone)]
struct Document {
    key: usize,
    /// `1 - b + b * length / average length`, the length in words.
    norm: f64,
}

/// BM25's term-frequency saturation.
const K1: f64 = 1.2;
/// BM25's length normalisation.
const B: f64 = 0.75;

impl Ranker {
    /// Indexes documents: each is `(key, texts)`, where the texts are names (split into words
    /// at case changes and separators) and descriptions. Several documents may share a key
    /// (a container and its members); a key scores as its best document.
    pub(crate) fn new(documents: Vec<(usize, Vec<String>)>) -> Ranker {
        Ranker::ignoring(documents, &[])
    }

    /// As [`Ranker::new`], leaving the `ignored` words (as [`words`] gives them) out of every
    /// document, so that they score nothing.
    pub(crate) fn ignoring(documents: Vec<(usize, Vec<String>)>, ignored: &[String]) -> Ranker {
        let mut postings: HashMap<String, (f64, Vec<(usize, u32)>)> = HashMap::new();
        let lengths: Vec<(usize, f64)> = documents
            .into_iter()
            .enumerate()
            .map(|(index, (key, texts))| {
                let mut counts: HashMap<String, u32> = HashMap::new();
                let mut length = 0.0;
                for text in &texts {
                    let text_words: Vec<String> = words(text)
                        .into_iter()
                        .filter(|w| !ignored.contains(w))
                        .collect();
                    if !text.contains(char::is_whitespace) {
                        for pair in name_pairs(&text_words) {
                            *counts.entry(pair).or_default() += 1;
                        }
                    }
                    for word in text_words {
                        *counts.entry(word).or_default() += 1;
                        length += 1.0;
                    }
                }
                for (word, count) in counts {
                    postings.entry(word).or_default().1.push((index, count));
                }
                (key, length)
            })
            .collect();
        let n = lengths.len() as f64;
        for (idf, holders) in postings.values_mut() {
            let held = holders.len() as f64;
            *idf = (1.0 + (n - held + 0.5) / (held + 0.5)).ln();
        }
        let average_length = if lengths.is_empty() {
            0.0
        } else {
            lengths.iter().map(|&(_, length)| length).sum::<f64>() / n
        };
        let documents = lengths
            .into_iter()
            .map(|(key, length)| Document {
                key,
                norm: 1.0 - B + B * length / average_length.max(1.0),
            })
            .collect();
        Ranker {
            documents,
            postings,
        }
    }

    /// The keys with a score above zero for `message`, each with its best document's score,
    /// best first (the lowest key among equal scores), as `(key, score)`.
    pub(crate) fn rank(&self, message: &str) -> Vec<(usize, f64)> {
        let mut query = words(message);
        let pairs = name_pairs(&query);
        query.extend(pairs);
        query.sort_unstable();
        query.dedup();
        // Each document's score adds its words' terms in the query's (sorted) order.
        let mut scores: HashMap<usize, f64> = HashMap::new();
        for word in &query {
            let Some((idf, holders)) = self.postings.get(word) else {
                continue;
            };
            for &(index, count) in holders {
                let tf = f64::from(count);
                let norm = self.documents[index].norm;
                *scores.entry(index).or_default() += idf * tf * (K1 + 1.0) / (tf + K1 * norm);
            }
        }
        let mut ranked: Vec<(usize, f64)> = scores
            .into_iter()
            .map(|(index, score)| (self.documents[index].key, score))
            .filter(|&(_, score)| score > 0.0)
            .collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let mut seen = HashSet::new();
        ranked.retain(|&(key, _)| seen.insert(key));
        ranked
    }
}

/// The pairs of side-by-side words of a name (or of a message), as terms of the index: each
/// is the two words with a space between them, which no word holds, so a pair never matches a
/// word.
fn name_pairs(words: &[String]) -> Vec<String> {
    words
        .windows(2)
        .map(|pair| format!("{} {}", pair[0], pair[1]))
        .collect()
}

/// English words that carry no subject of their own (articles, prepositions, conjunctions,
/// pronouns, auxiliary verbs, question words): left out of the ranking. In a catalog's
/// descriptions they are rare enough to weigh like telling words, so that "Show the staged
/// changes of the repository" ranked `git_show` first by the "of" in its description
/// ("Shows the contents of a commit, or of a file ...").
const FUNCTION_WORDS: [&str; 78] = [
    "am", "an", "and", "are", "as", "at", "be", "been", "being", "between", "but", "by", "can",
    "could", "did", "do", "does", "for", "from", "had", "has", "have", "he", "her", "here", "him",
    "his", "how", "if", "in", "into", "is", "it", "its", "may", "me", "might", "must", "my", "nor",
    "of", "on", "onto", "or", "our", "shall", "she", "should", "so", "than", "that", "the",
    "their", "them", "then", "there", "these", "they", "this", "those", "to", "us", "was", "we",
    "were", "what", "when", "where", "which", "who", "whom", "whose", "why", "will", "with",
    "would", "you", "your",
];

/// Verbs that ask for a change, in the form a request uses them ("Commit the staged changes",
/// "Add a relation", "Please move draft.txt", "Forget the observation"): [`asks_for_change`]
/// reads a message with none of them as one that only reads. Only base forms: a past
/// participle is as often an adjective in a request that reads ("Show the staged changes",
/// "everything stored in memory", "the files modified today"), where counting it would keep
/// a writer in the hint; a participle asks for a change only after a verb that asks for a
/// thing to be done ("I want draft.txt deleted", [`CHANGE_PARTICIPLES`]). A word that is a verb of change in some requests and a
/// noun in others ("note", "set", "commit") counts in all: it keeps the hint as it would be
/// without annotations.
const CHANGE_VERBS: [&str; 82] = [
    "add",
    "append",
    "apply",
    "archive",
    "assign",
    "attach",
    "build",
    "cancel",
    "change",
    "checkout",
    "clean",
    "clear",
    "close",
    "commit",
    "compile",
    "connect",
    "copy",
    "create",
    "delete",
    "deploy",
    "destroy",
    "detach",
    "disable",
    "discard",
    "drop",
    "edit",
    "enable",
    "erase",
    "execute",
    "fix",
    "forget",
    "format",
    "import",
    "init",
    "insert",
    "install",
    "kill",
    "link",
    "make",
    "mark",
    "merge",
    "modify",
    "move",
    "new",
    "note",
    "overwrite",
    "post",
    "publish",
    "pull",
    "purge",
    "push",
    "put",
    "record",
    "relate",
    "remember",
    "remove",
    "rename",
    "replace",
    "reset",
    "restart",
    "restore",
    "revert",
    "run",
    "save",
    "send",
    "set",
    "stage",
    "start",
    "stop",
    "store",
    "submit",
    "switch",
    "tag",
    "trigger",
    "undo",
    "uninstall",
    "unstage",
    "update",
    "upgrade",
    "upload",
    "wipe",
    "write",
];

/// The past participles of the [verbs of change](CHANGE_VERBS) (both spellings of
/// "cancelled"; "checkout", "init" and "new" have none a request would use). Alone a
/// participle reads: "Show the staged changes", "the files modified today", "what I have
/// staged", "which branches have been merged". It asks for a change when it follows one of
/// [`ASKING_VERBS`] with a word or more between them, the last not "been": "I want draft.txt
/// deleted", "Please get the old branch removed", "I need notes.txt to be written".
const CHANGE_PARTICIPLES: [&str; 81] = [
    "added",
    "appended",
    "applied",
    "archived",
    "assigned",
    "attached",
    "built",
    "canceled",
    "cancelled",
    "changed",
    "cleaned",
    "cleared",
    "closed",
    "committed",
    "compiled",
    "connected",
    "copied",
    "created",
    "deleted",
    "deployed",
    "destroyed",
    "detached",
    "disabled",
    "discarded",
    "dropped",
    "edited",
    "enabled",
    "erased",
    "executed",
    "fixed",
    "forgotten",
    "formatted",
    "imported",
    "initialized",
    "inserted",
    "installed",
    "killed",
    "linked",
    "made",
    "marked",
    "merged",
    "modified",
    "moved",
    "noted",
    "overwritten",
    "posted",
    "published",
    "pulled",
    "purged",
    "pushed",
    "put",
    "recorded",
    "related",
    "remembered",
    "removed",
    "renamed",
    "replaced",
    "reset",
    "restarted",
    "restored",
    "reverted",
    "run",
    "saved",
    "sent",
    "set",
    "staged",
    "started",
    "stopped",
    "stored",
    "submitted",
    "switched",
    "tagged",
    "triggered",
    "undone",
    "uninstalled",
    "unstaged",
    "updated",
    "upgraded",
    "uploaded",
    "wiped",
    "written",
];

/// Verbs that ask for a thing to be done to an object named after them ("want it deleted",
/// "have the branch merged"), in the forms a request uses.
const ASKING_VERBS: [&str; 10] = [
    "get", "gets", "had", "has", "have", "like", "need", "needs", "want", "wants",
];

/// Whether a message asks for a change: one of its words, as written (lower-cased, not read as
/// a singular), is a [verb of change](CHANGE_VERBS), or a sentence of it has a
/// [participle of one](CHANGE_PARTICIPLES) that an [asking verb](ASKING_VERBS) governs. "Show the last 3 commits" asks for none,
/// "Commit the staged changes" does: the plural "commits" is not the verb. A noun in the
/// verb's form ("the last commit") reads as a change too, which only keeps the hint as it
/// would be without annotations.
pub(crate) fn asks_for_change(message: &str) -> bool {
    sentences(message).any(|sentence| {
        let words: Vec<String> = sentence
            .split(|c: char| !c.is_alphanumeric())
            .filter(|word| !word.is_empty())
            .map(str::to_lowercase)
            .collect();
        let asking = words
            .iter()
            .position(|word| ASKING_VERBS.contains(&word.as_str()));
        words.iter().enumerate().any(|(i, word)| {
            CHANGE_VERBS.binary_search(&word.as_str()).is_ok()
                || (CHANGE_PARTICIPLES.binary_search(&word.as_str()).is_ok()
                    && asking.is_some_and(|a| a + 1 < i)
                    && words[i - 1] != "been")
        })
    })
}

/// The sentences of a message: its text split after each `.`, `?` or `!` that ends the text or
/// is followed by whitespace (so that "draft.txt" stays one word).
fn sentences(message: &str) -> impl Iterator<Item = &str> {
    let mut rest = message;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = rest
            .char_indices()
            .find(|&(i, c)| {
                matches!(c, '.' | '?' | '!')
                    && rest[i + c.len_utf8()..]
                        .chars()
                        .next()
                        .is_none_or(char::is_whitespace)
            })
            .map_or(rest.len(), |(i, c)| i + c.len_utf8());
        let (sentence, tail) = rest.split_at(end);
        rest = tail;
        Some(sentence)
    })
}

/// The words of a text for ranking: split at every character that is neither a letter nor a
/// digit and at lower-to-upper case changes, lower-cased, of two characters or more and not
/// [function words](FUNCTION_WORDS), plurals read as their [singulars](singular), and each
/// word of a family that names one thing read as the family's word (see the
/// module's documentation).
pub(crate) fn words(text: &str) -> Vec<String> {
    let mut spaced = String::with_capacity(text.len() + 8);
    let mut previous_lower = false;
    for c in text.chars() {
        if c.is_uppercase() && previous_lower {
            spaced.push(' ');
        }
        previous_lower = c.is_lowercase() || c.is_ascii_digit();
        spaced.push(c);
    }
    spaced
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 2)
        .map(str::to_lowercase)
        .filter(|word| !FUNCTION_WORDS.contains(&word.as_str()))
        .map(|word| {
            let word = singular(word);
            match word.as_str() {
                "add" | "new" | "insert" | "make" => "create".to_owned(),
                "remove" | "erase" => "delete".to_owned(),
                "find" | "lookup" => "search".to_owned(),
                "now" | "currently" => "current".to_owned(),
                _ => word,
            }
        })
        .collect()
}

/// A plural's singular, for words of four letters or more: `-ies` as `-y` ("directories",
/// "entities"), `-es` after a hissing ending (`-sses`, `-xes`, `-zzes`, `-shes`, `-tches`,
/// `-nches`, `-rches`: "branches", "boxes", "searches") without the `es`, any other `-s` (not
/// `-ss`) without the `s` ("files", "caches"). Other words stay as they are.
fn singular(mut word: String) -> String {
    if word.chars().count() < 4 || !word.ends_with('s') || word.ends_with("ss") {
        return word;
    }
    if word.len() >= 5 && word.ends_with("ies") {
        word.truncate(word.len() - 3);
        word.push('y');
    } else if ["sses", "xes", "zzes", "shes", "tches", "nches", "rches"]
        .iter()
        .any(|ending| word.ends_with(ending))
    {
        word.truncate(word.len() - 2);
    } else {
        word.pop();
    }
    word
}

#[cfg(test)]
mod tests {
    use super::{
        ASKING_VERBS, CHANGE_PARTICIPLES, CHANGE_VERBS, FUNCTION_WORDS, Ranker, asks_for_change,
        sentences, words,
    };

    #[test]
    fn word_lists_are_sorted_lower_case_and_without_repeats() {
        for list in [
            &CHANGE_VERBS[..],
            &CHANGE_PARTICIPLES[..],
            &ASKING_VERBS[..],
            &FUNCTION_WORDS[..],
        ] {
            assert!(list.windows(2).all(|w| w[0] < w[1]), "{list:?}");
            assert!(
                list.iter()
                    .all(|w| w.chars().all(|c| c.is_ascii_lowercase()))
            );
        }
    }

    #[test]
    fn a_verb_of_change_as_written_makes_a_request_for_change() {
        for reads in [
            "Show the last 3 commits of the repository at /tmp/repo",
            "What time is it now in Europe/Paris?",
            "List the branches and show the working tree status",
            "Read notes.txt and todo.txt",
        ] {
            assert!(!asks_for_change(reads), "{reads}");
        }
        for changes in [
            "Commit the staged changes with the message 'fix'",
            "Please ADD a relation between Ada and the Engine",
            "Move draft.txt to final.txt",
            "stage README.md",
            "Forget the observation 'likes tea' about Alan Turing",
        ] {
            assert!(asks_for_change(changes), "{changes}");
        }
    }

    #[test]
    fn a_participle_asks_for_a_change_only_after_a_verb_that_asks() {
        for reads in [
            "Show the staged changes of the repository",
            "Show me everything stored in memory",
            "List the files modified today",
            "Show what I have staged",
            "Which branches have been merged into main?",
            "Have the old files been deleted?",
            "I want to know. Which files were deleted?",
        ] {
            assert!(!asks_for_change(reads), "{reads}");
        }
        for changes in [
            "I want draft.txt deleted",
            "Please get the old branch removed.",
            "I need /tmp/notes.txt to be written today",
            "We'd like the README staged and the branch merged",
        ] {
            assert!(asks_for_change(changes), "{changes}");
        }
        // The sentence ends at a stop followed by a space, not inside a file name.
        assert_eq!(
            sentences("I want draft.txt deleted. Then show me. ").collect::<Vec<_>>(),
            ["I want draft.txt deleted.", " Then show me.", " "]
        );
    }

    #[test]
    fn words_split_names_and_fold_plurals() {
        assert_eq!(
            words("read_text_file getSum list-files A x"),
            ["read", "text", "file", "get", "sum", "list", "file"]
        );
        assert_eq!(words("class glass bus"), ["class", "glass", "bus"]);
    }

    #[test]
    fn verbs_naming_one_action_are_one_word() {
        assert_eq!(
            words("Add a relation, make new ones, insert rows"),
            [
                "create", "relation", "create", "create", "one", "create", "row"
            ]
        );
        assert_eq!(
            words("removes erase delete_file"),
            ["delete", "delete", "delete", "file"]
        );
        assert_eq!(words("find lookups search"), ["search", "search", "search"]);
        // Other verbs stay as they are: "show" is not "get", "change" is not "update".
        assert_eq!(
            words("show get change update"),
            ["show", "get", "change", "update"]
        );
    }

    #[test]
    fn plurals_read_as_their_singulars() {
        assert_eq!(
            words("directories entities branches boxes searches classes caches files"),
            [
                "directory",
                "entity",
                "branch",
                "box",
                "search",
                "class",
                "cache",
                "file"
            ]
        );
        // Short words and words ending in `ss` stay.
        assert_eq!(words("ties bus glass"), ["tie", "bus", "glass"]);
    }

    #[test]
    fn function_words_are_left_out_and_now_reads_as_current() {
        assert_eq!(
            words("Show the staged changes of the repository at /tmp/repo"),
            ["show", "staged", "change", "repository", "tmp", "repo"]
        );
        assert_eq!(
            words("What time is it now? currently"),
            ["time", "current", "current"]
        );
    }

    #[test]
    fn a_function_word_of_one_description_does_not_make_its_member_fit() {
        // Members of a Git server's harness, as the server describes them: only `git_show`'s
        // description has "of", as the request has. Counted, it scores `git_show` within half
        // of the best, where a container note's hint names it beside the member asked for.
        let member = |key: usize, name: &str, description: &str| {
            (
                key,
                vec![name.to_owned(), name.to_owned(), description.to_owned()],
            )
        };
        let ranker = Ranker::new(vec![
            member(
                0,
                "git_show",
                "Shows the contents of a commit, or of a file or directory given as <revision>:<path>",
            ),
            member(
                1,
                "git_diff_staged",
                "Shows changes that are staged for commit",
            ),
            member(
                2,
                "git_diff_unstaged",
                "Shows changes in the working directory that are not yet staged",
            ),
            member(3, "git_status", "Shows the working tree status"),
            member(4, "git_log", "Shows the commit logs"),
        ]);
        let ranked = ranker.rank("Show the staged changes of the git repository");
        let &(best, best_score) = ranked.first().expect("a member fits");
        assert_eq!(best, 1, "{ranked:?}");
        let show = ranked
            .iter()
            .find(|&&(key, _)| key == 0)
            .map_or(0.0, |&(_, s)| s);
        assert!(show < best_score / 2.0, "{ranked:?}");
    }

    #[test]
    fn a_request_that_adds_finds_the_member_that_creates() {
        // The member names of a knowledge graph's harness: "add" in the request shares no word
        // form with `create_relations`, and "knowledge graph" in `delete_relations`'s
        // description would otherwise rank it first.
        let ranker = Ranker::new(vec![
            (
                0,
                vec![
                    "create_relations".into(),
                    "create_relations".into(),
                    "Create multiple new relations between entities.".into(),
                ],
            ),
            (
                1,
                vec![
                    "delete_relations".into(),
                    "delete_relations".into(),
                    "Delete multiple relations from the knowledge graph.".into(),
                ],
            ),
            (
                2,
                vec![
                    "read_graph".into(),
                    "read_graph".into(),
                    "Read the entire knowledge graph.".into(),
                ],
            ),
        ]);
        let ranked =
            ranker.rank("Add a relation between Ada and the Engine to the knowledge graph");
        assert_eq!(ranked.first().map(|&(key, _)| key), Some(0), "{ranked:?}");
    }

    #[test]
    fn the_container_whose_words_the_message_uses_ranks_first() {
        let ranker = Ranker::new(vec![
            (
                0,
                vec![
                    "MathTools".into(),
                    "Math operations".into(),
                    "add".into(),
                    "Adds two integers.".into(),
                    "multiply".into(),
                    "Multiplies two integers.".into(),
                ],
            ),
            (
                1,
                vec![
                    "FileTools".into(),
                    "File operations".into(),
                    "read_file".into(),
                    "Reads a file.".into(),
                ],
            ),
            (
                2,
                vec![
                    "DatabaseTools".into(),
                    "Database operations".into(),
                    "query".into(),
                    "Runs a read-only SQL query.".into(),
                ],
            ),
        ]);
        let ranked = ranker.rank("Please read the files notes.txt and todo.txt");
        assert_eq!(ranked.first().map(|r| r.0), Some(1), "{ranked:?}");
        assert_eq!(ranker.rank("add 2 and 3").first().map(|r| r.0), Some(0));
        assert_eq!(ranker.rank("run a SQL query").first().map(|r| r.0), Some(2));
        // Words every container holds score little; words none holds score nothing.
        assert!(ranker.rank("zebra").is_empty());
        let common = ranker.rank("operations");
        assert!(common.iter().all(|&(_, s)| s < 0.5), "{common:?}");
        assert!(Ranker::new(Vec::new()).rank("add").is_empty());
    }

    #[test]
    fn ignored_words_score_nothing() {
        let documents = || {
            vec![
                (
                    0,
                    vec![
                        "list_resources".to_owned(),
                        "Lists the resources of Memory".to_owned(),
                    ],
                ),
                (
                    1,
                    vec!["read_graph".to_owned(), "Reads the whole graph".to_owned()],
                ),
            ]
        };
        assert_eq!(
            Ranker::new(documents()).rank("everything in memory")[0].0,
            0
        );
        let ranker = Ranker::ignoring(documents(), &words("Memory"));
        assert!(ranker.rank("everything in memory").is_empty());
        assert_eq!(ranker.rank("the whole graph of memory")[0].0, 1);
    }

    #[test]
    fn a_key_scores_as_its_best_document_whatever_its_size() {
        // A container of many members, each a document of its own, against a container of one
        // member with a long description sharing the message's common words.
        let mut documents = vec![(0, vec!["Files".into(), "Work with files".into()])];
        for (name, description) in [
            ("read_file", "Reads the file at a path."),
            ("write_file", "Writes a file at a path."),
            ("list_directory", "Lists the entries of a directory."),
            (
                "directory_tree",
                "Shows the tree of a directory, recursively.",
            ),
            ("move_file", "Moves or renames a file."),
            (
                "search_files",
                "Finds the files whose names match a pattern.",
            ),
        ] {
            documents.push((
                0,
                vec!["Files".into(), name.into(), name.into(), description.into()],
            ));
        }
        documents.push((1, vec!["Thinking".into(), "Step by step thinking".into()]));
        documents.push((
            1,
            vec![
                "Thinking".into(),
                "think".into(),
                "think".into(),
                "What is the current thought, what is the next one, what is the plan, what is \
                 the revision of the current thought: show the thinking as it is."
                    .into(),
            ],
        ));
        let ranker = Ranker::new(documents);
        let ranked = ranker.rank("Show the directory tree of /tmp/work.");
        assert_eq!(ranked.first().map(|r| r.0), Some(0), "{ranked:?}");
        // Each key once, with its best document's score.
        assert_eq!(ranked.len(), 2, "{ranked:?}");
        assert!(ranked[0].1 > ranked[1].1, "{ranked:?}");
        let thinking = ranker.rank("What is the next thought?");
        assert_eq!(thinking.first().map(|r| r.0), Some(1), "{thinking:?}");
    }

    #[test]
    fn a_name_whose_words_the_message_has_in_its_order_ranks_first() {
        // Members of a Git and a file-system server, as the servers describe them. Word by
        // word, "Show the directory tree" fits `git_show` (a short description, "show" three
        // times, "directory") and `git_status` ("working tree") better than `directory_tree`,
        // whose long description holds "directory" and "tree" among many other words; the two
        // words side by side, as the name has them, are what tell it.
        let member = |key: usize, name: &str, description: &str| {
            (
                key,
                vec![
                    "Git".to_owned(),
                    name.to_owned(),
                    name.to_owned(),
                    description.to_owned(),
                    "repo_path".to_owned(),
                ],
            )
        };
        let file = |name: &str, description: &str| {
            (
                1,
                vec![
                    "Filesystem".to_owned(),
                    name.to_owned(),
                    name.to_owned(),
                    description.to_owned(),
                    "path".to_owned(),
                ],
            )
        };
        // Short members of other servers, as most of a catalog's are.
        let other = |name: &str, description: &str| {
            (
                2,
                vec![
                    "Everything".to_owned(),
                    name.to_owned(),
                    name.to_owned(),
                    description.to_owned(),
                ],
            )
        };
        let documents = vec![
            other("echo", "Echoes back the input"),
            other("get-sum", "Returns the sum of two numbers"),
            other("get-tiny-image", "Returns a tiny image"),
            other("get-env", "Returns the environment of the server"),
            other("get_current_time", "Get the current time in a time zone"),
            other("convert_time", "Convert a time between time zones"),
            member(
                0,
                "git_show",
                "Shows the contents of a commit, or of a file or directory given as <revision>:<path>",
            ),
            member(0, "git_status", "Shows the working tree status"),
            member(
                0,
                "git_diff_unstaged",
                "Shows changes in the working directory that are not yet staged",
            ),
            member(0, "git_log", "Shows the commit logs"),
            member(0, "git_commit", "Records changes to the repository"),
            file(
                "directory_tree",
                "Get a recursive tree view of files and directories as a JSON structure. Each \
                 entry includes 'name', 'type' (file/directory), and 'children' for \
                 directories. Files have no children array, while directories always have a \
                 children array (which may be empty). The output is formatted with 2-space \
                 indentation for readability. Only works within allowed directories.",
            ),
            file(
                "list_directory",
                "Get a detailed listing of all files and directories in a specified path. \
                 Results clearly distinguish between files and directories with [FILE] and \
                 [DIR] prefixes. Only works within allowed directories.",
            ),
            file(
                "create_directory",
                "Create a new directory or ensure a directory exists. Can create multiple \
                 nested directories in one operation. Only works within allowed directories.",
            ),
            file(
                "list_directory_with_sizes",
                "Get a detailed listing of all files and directories in a specified path, \
                 including sizes. This tool is useful for understanding directory structure \
                 and finding specific files within a directory.",
            ),
            file(
                "search_files",
                "Recursively search for files and directories matching a pattern. The \
                 patterns should be glob-style patterns that match paths relative to the \
                 working directory. Returns full paths to all matching items. Only searches \
                 within allowed directories.",
            ),
            file(
                "get_file_info",
                "Retrieve detailed metadata about a file or directory. Only works within \
                 allowed directories.",
            ),
            file(
                "read_text_file",
                "Read the complete contents of a file from the file system as text.",
            ),
        ];
        let ranker = Ranker::new(documents);
        let ranked = ranker.rank("Show the directory tree of /tmp/.tmpAbCd/scratch.");
        assert_eq!(ranked.first().map(|r| r.0), Some(1), "{ranked:?}");
        // The pair counts where the message has the words side by side and in the name's
        // order; apart, each counts as a word only.
        let score = |message: &str| {
            ranker
                .rank(message)
                .iter()
                .find(|r| r.0 == 1)
                .map_or(0.0, |r| r.1)
        };
        assert!(
            score("directory tree") > score("tree directory"),
            "{} {}",
            score("directory tree"),
            score("tree directory")
        );
        assert!((score("tree directory") - score("the tree of a directory")).abs() < 1e-9);
    }
}
