//! Harnesses declared in a crate that depends on hpd-agent as `agents`, and one declared through
//! a re-export (`crate::hpd`), as a framework built on hpd-agent would. The macros take the
//! crate's path from `crate = "..."`.

use agents::{ai_function, collapse, tool_harness};

/// hpd-agent re-exported, as a framework built on it would.
pub use agents as hpd;

/// A plain harness.
#[derive(Default)]
pub struct Clock;

#[tool_harness(crate = "agents")]
impl Clock {
    /// The current hour.
    #[ai_function]
    fn hour(&self, #[ai_description("Hours to add.")] offset: u8) -> u8 {
        (12 + offset) % 24
    }
}

/// A collapsed harness.
#[derive(Default)]
pub struct Calendar;

#[collapse(
    "Calendar operations",
    crate = "agents",
    system_prompt = "Dates are ISO 8601."
)]
impl Calendar {
    /// The next free day.
    #[ai_function]
    async fn next_free_day(&self) -> String {
        "2026-12-03".to_owned()
    }
}

/// A harness whose macro reaches hpd-agent through this crate's re-export.
#[derive(Default)]
pub struct Alarm;

#[tool_harness(crate = "crate::hpd")]
impl Alarm {
    /// Sets an alarm.
    #[ai_function]
    fn set_alarm(&self, minutes: u32) -> Result<String, String> {
        if minutes == 0 {
            return Err("minutes must be at least 1".to_owned());
        }
        Ok(format!("alarm in {minutes} min"))
    }
}
