//! The demo's harnesses: a plain `WeatherTools`, a collapsed `MathTools`, a collapsed
//! `FileTools` over an in-memory folder of notes and a collapsed `Calendar` of team events.

use hpd_agent::prelude::*;

/// Arithmetic, collapsed behind one `MathTools` container.
#[derive(Default)]
pub struct MathTools;

#[collapse(
    "Math operations",
    function_result = "Math tools are active.",
    system_prompt = "Use exact arithmetic and show units when relevant."
)]
impl MathTools {
    /// Adds two integers.
    #[ai_function]
    fn add(&self, a: i64, b: i64) -> i64 {
        a + b
    }

    /// Multiplies two integers.
    #[ai_function]
    fn multiply(&self, a: i64, b: i64) -> i64 {
        a * b
    }
}

/// Weather lookups, always visible.
#[derive(Default)]
pub struct WeatherTools;

#[tool_harness]
impl WeatherTools {
    /// Gets the current weather for a city.
    #[ai_function(name = "get_weather")]
    fn get_weather(
        &self,
        #[ai_description("The city to get weather for.")] city: String,
    ) -> String {
        format!("It is sunny in {city}.")
    }
}

/// The team's shared notes, an in-memory folder: path and text.
const NOTES: [(&str, &str); 4] = [
    (
        "notes/picnic.md",
        "Picnic checklist: one blanket per three people, a cooler box, plates.",
    ),
    (
        "notes/budget.md",
        "Outings budget: 150 EUR per event, receipts to Kari.",
    ),
    (
        "notes/contacts.md",
        "Kari (treasurer), Ola (logistics), Ingrid (venue).",
    ),
    ("README.md", "Shared notes of the events team."),
];

/// Read access to the team's notes, collapsed behind one `FileTools` container.
#[derive(Default)]
pub struct FileTools;

#[collapse(
    "Read the team's shared notes",
    system_prompt = "Quote file paths exactly as list_files prints them."
)]
impl FileTools {
    /// Lists the note files under a folder (`""` for all).
    #[ai_function]
    fn list_files(
        &self,
        #[ai_description("A folder prefix such as `notes/`, or empty for every file.")]
        folder: String,
    ) -> Vec<String> {
        NOTES
            .iter()
            .filter(|(path, _)| path.starts_with(&folder))
            .map(|(path, _)| (*path).to_owned())
            .collect()
    }

    /// Returns the text of a note file.
    #[ai_function]
    fn read_file(
        &self,
        #[ai_description("The file path, as list_files prints it.")] path: String,
    ) -> Result<String, String> {
        note(&path).map(str::to_owned)
    }

    /// Size of a note file in bytes and lines.
    #[ai_function]
    fn file_info(
        &self,
        #[ai_description("The file path, as list_files prints it.")] path: String,
    ) -> Result<String, String> {
        let text = note(&path)?;
        Ok(format!(
            "{path}: {} bytes, {} lines",
            text.len(),
            text.lines().count()
        ))
    }

    /// Finds the note files whose text contains a word (case-insensitive).
    #[ai_function]
    fn search_files(
        &self,
        #[ai_description("The word or phrase to look for.")] text: String,
    ) -> Vec<String> {
        let needle = text.to_lowercase();
        NOTES
            .iter()
            .filter(|(_, body)| body.to_lowercase().contains(&needle))
            .map(|(path, _)| (*path).to_owned())
            .collect()
    }
}

/// The text of the note at `path`, or an error naming the known paths.
fn note(path: &str) -> Result<&'static str, String> {
    NOTES
        .iter()
        .find(|(p, _)| *p == path)
        .map(|(_, text)| *text)
        .ok_or_else(|| {
            let known: Vec<&str> = NOTES.iter().map(|(p, _)| *p).collect();
            format!("no file '{path}'; the files are {}", known.join(", "))
        })
}

/// One event of the team calendar.
#[derive(Debug, Clone)]
struct Event {
    id: u32,
    date: String,
    title: String,
}

/// The team calendar, in memory, collapsed behind one `Calendar` container.
pub struct Calendar {
    events: std::sync::Mutex<Vec<Event>>,
}

impl Default for Calendar {
    fn default() -> Self {
        let event = |id, date: &str, title: &str| Event {
            id,
            date: date.to_owned(),
            title: title.to_owned(),
        };
        Calendar {
            events: std::sync::Mutex::new(vec![
                event(1, "2026-06-12", "Board meeting"),
                event(2, "2026-06-20", "Summer party"),
            ]),
        }
    }
}

impl Calendar {
    fn events(&self) -> std::sync::MutexGuard<'_, Vec<Event>> {
        self.events
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// `date` when it is written `YYYY-MM-DD`.
fn check_date(date: &str) -> Result<&str, String> {
    let shape = date.len() == 10
        && date.char_indices().all(|(i, c)| match i {
            4 | 7 => c == '-',
            _ => c.is_ascii_digit(),
        });
    if shape {
        Ok(date)
    } else {
        Err(format!("'{date}' is not a date written YYYY-MM-DD"))
    }
}

#[collapse(
    "The team calendar: list, add and cancel events",
    system_prompt = "Dates are YYYY-MM-DD. Confirm an event's title before cancelling it."
)]
impl Calendar {
    /// Lists the events between two dates, both included.
    #[ai_function]
    fn list_events(
        &self,
        #[ai_description("First day, YYYY-MM-DD.")] from: String,
        #[ai_description("Last day, YYYY-MM-DD.")] to: String,
    ) -> Result<Vec<String>, String> {
        let (from, to) = (check_date(&from)?, check_date(&to)?);
        Ok(self
            .events()
            .iter()
            .filter(|e| e.date.as_str() >= from && e.date.as_str() <= to)
            .map(|e| format!("#{} {} {}", e.id, e.date, e.title))
            .collect())
    }

    /// Adds an event and returns its id.
    #[ai_function]
    fn add_event(
        &self,
        #[ai_description("The day, YYYY-MM-DD.")] date: String,
        #[ai_description("What happens.")] title: String,
    ) -> Result<String, String> {
        check_date(&date)?;
        let mut events = self.events();
        let id = events.iter().map(|e| e.id).max().unwrap_or(0) + 1;
        events.push(Event {
            id,
            date: date.clone(),
            title: title.clone(),
        });
        Ok(format!("added #{id} {date} {title}"))
    }

    /// Cancels an event by id.
    #[ai_function]
    fn cancel_event(&self, #[ai_description("The event id.")] id: u32) -> Result<String, String> {
        let mut events = self.events();
        let at = events
            .iter()
            .position(|e| e.id == id)
            .ok_or_else(|| format!("no event #{id}"))?;
        let event = events.remove(at);
        Ok(format!(
            "cancelled #{} {} {}",
            event.id, event.date, event.title
        ))
    }

    /// Tells whether a day has no event.
    #[ai_function]
    fn is_free(
        &self,
        #[ai_description("The day, YYYY-MM-DD.")] date: String,
    ) -> Result<bool, String> {
        let date = check_date(&date)?;
        Ok(!self.events().iter().any(|e| e.date == date))
    }
}
