//! The synthetic catalog of the context-economy benchmark, written by `bench/gen_catalog.py`
//! (do not edit by hand): 20 collapsed harnesses of 8 functions each.

#![allow(missing_docs)]

use hpd_agent::prelude::*;
use serde::Deserialize;

/// Who can see the event details.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Visibility {
    /// Public.
    Public,
    /// Private.
    Private,
    /// Confidential.
    Confidential,
}

/// The time window to consider.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct TimeRange {
    /// Start as an RFC 3339 timestamp.
    pub start: String,
    /// End as an RFC 3339 timestamp.
    pub end: String,
}

/// Calendar events, availability and reminders.
#[derive(Debug, Default)]
pub struct CalendarTools;

#[collapse(
    "Calendar events, availability and reminders",
    system_prompt = "Times are in the user's time zone unless they name another; confirm before deleting events."
)]
impl CalendarTools {
    /// Lists the events of the user's primary calendar within a time window.
    #[ai_function]
    fn list_events(
        &self,
        #[ai_description("The time window to consider.")] window: TimeRange,
        #[ai_description("Length of the event in minutes.")] duration_minutes: Option<u32>,
    ) -> String {
        format!("list_events {:?}", (window, duration_minutes,))
    }

    /// Creates a calendar event and returns its identifier.
    #[ai_function]
    fn create_event(
        &self,
        #[ai_description("A short human-readable title.")] title: String,
        #[ai_description("The time window to consider.")] window: TimeRange,
        #[ai_description("Who can see the event details.")] visibility: Option<Visibility>,
    ) -> String {
        format!("create_event {:?}", (title, window, visibility,))
    }

    /// Changes the title, time or visibility of an existing event.
    #[ai_function]
    fn update_event(
        &self,
        #[ai_description("The identifier of the calendar event.")] event_id: String,
        #[ai_description("A short human-readable title.")] title: Option<String>,
        #[ai_description("The time window to consider.")] window: Option<TimeRange>,
        #[ai_description("Who can see the event details.")] visibility: Option<Visibility>,
    ) -> String {
        format!("update_event {:?}", (event_id, title, window, visibility,))
    }

    /// Deletes an event and notifies its attendees.
    #[ai_function]
    fn delete_event(
        &self,
        #[ai_description("The identifier of the calendar event.")] event_id: String,
        #[ai_description("A short human-readable title.")] title: Option<String>,
    ) -> String {
        format!("delete_event {:?}", (event_id, title,))
    }

    /// Finds the first free slot of the given length for all listed attendees.
    #[ai_function]
    fn find_free_slot(
        &self,
        #[ai_description("Length of the event in minutes.")] duration_minutes: u32,
        #[ai_description("The time window to consider.")] window: TimeRange,
        #[ai_description("A short human-readable title.")] title: Option<String>,
    ) -> String {
        format!("find_free_slot {:?}", (duration_minutes, window, title,))
    }

    /// Adds an attendee by email address and sends the invitation.
    #[ai_function]
    fn invite_attendee(
        &self,
        #[ai_description("The identifier of the calendar event.")] event_id: String,
        #[ai_description("A short human-readable title.")] title: String,
    ) -> String {
        format!("invite_attendee {:?}", (event_id, title,))
    }

    /// Sets a reminder a number of minutes before an event starts.
    #[ai_function]
    fn set_reminder(
        &self,
        #[ai_description("The identifier of the calendar event.")] event_id: String,
        #[ai_description("Length of the event in minutes.")] duration_minutes: u32,
    ) -> String {
        format!("set_reminder {:?}", (event_id, duration_minutes,))
    }

    /// Exports the events of a time window as an iCalendar file.
    #[ai_function]
    fn export_calendar(
        &self,
        #[ai_description("The time window to consider.")] window: TimeRange,
        #[ai_description("Who can see the event details.")] visibility: Option<Visibility>,
    ) -> String {
        format!("export_calendar {:?}", (window, visibility,))
    }
}

/// The mailbox folder.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Folder {
    /// Inbox.
    Inbox,
    /// Sent.
    Sent,
    /// Archive.
    Archive,
    /// Trash.
    Trash,
}

/// Who receives the message.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct Recipients {
    /// Primary recipients.
    pub to: Vec<String>,
    /// Carbon-copy recipients.
    pub cc: Vec<String>,
}

/// Read, search, send and organise email.
#[derive(Debug, Default)]
pub struct EmailTools;

#[collapse(
    "Read, search, send and organise email",
    system_prompt = "Never send a message without showing the user the final text first."
)]
impl EmailTools {
    /// Searches messages and returns their identifiers, senders and subjects.
    #[ai_function]
    fn search_messages(
        &self,
        #[ai_description("A search query in the mail provider's syntax.")] query: String,
        #[ai_description("The largest number of messages to return.")] max_results: Option<u32>,
        #[ai_description("The mailbox folder.")] folder: Option<Folder>,
    ) -> String {
        format!("search_messages {:?}", (query, max_results, folder,))
    }

    /// Returns the full body and headers of one message.
    #[ai_function]
    fn read_message(
        &self,
        #[ai_description("The identifier of the message.")] message_id: String,
    ) -> String {
        format!("read_message {:?}", (message_id,))
    }

    /// Sends a new plain-text message.
    #[ai_function]
    fn send_message(
        &self,
        #[ai_description("Who receives the message.")] recipients: Recipients,
        #[ai_description("A search query in the mail provider's syntax.")] query: String,
    ) -> String {
        format!("send_message {:?}", (recipients, query,))
    }

    /// Replies to a message, quoting the original below the reply.
    #[ai_function]
    fn reply_message(
        &self,
        #[ai_description("The identifier of the message.")] message_id: String,
        #[ai_description("A search query in the mail provider's syntax.")] query: String,
    ) -> String {
        format!("reply_message {:?}", (message_id, query,))
    }

    /// Forwards a message with its attachments to new recipients.
    #[ai_function]
    fn forward_message(
        &self,
        #[ai_description("The identifier of the message.")] message_id: String,
        #[ai_description("Who receives the message.")] recipients: Recipients,
    ) -> String {
        format!("forward_message {:?}", (message_id, recipients,))
    }

    /// Moves a message to another folder.
    #[ai_function]
    fn move_message(
        &self,
        #[ai_description("The identifier of the message.")] message_id: String,
        #[ai_description("The mailbox folder.")] folder: Folder,
    ) -> String {
        format!("move_message {:?}", (message_id, folder,))
    }

    /// Adds a label to a message, creating the label if needed.
    #[ai_function]
    fn label_message(
        &self,
        #[ai_description("The identifier of the message.")] message_id: String,
        #[ai_description("A search query in the mail provider's syntax.")] query: String,
    ) -> String {
        format!("label_message {:?}", (message_id, query,))
    }

    /// Moves a message to the trash, or deletes it for good when asked.
    #[ai_function]
    fn delete_message(
        &self,
        #[ai_description("The identifier of the message.")] message_id: String,
        #[ai_description("The mailbox folder.")] folder: Option<Folder>,
    ) -> String {
        format!("delete_message {:?}", (message_id, folder,))
    }
}

/// Which issues to include.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum IssueState {
    /// Open.
    Open,
    /// Closed.
    Closed,
    /// All.
    All,
}

/// Labels to apply.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct Labels {
    /// Label names.
    pub names: Vec<String>,
    /// Replace the existing labels instead of adding.
    pub replace: bool,
}

/// Repositories, issues and pull requests on GitHub.
#[derive(Debug, Default)]
pub struct GitHubTools;

#[collapse(
    "Repositories, issues and pull requests on GitHub",
    system_prompt = "Quote issue and pull request numbers with a leading #."
)]
impl GitHubTools {
    /// Lists the issues of a repository, newest first.
    #[ai_function]
    fn list_issues(
        &self,
        #[ai_description("The repository as owner/name.")] repository: String,
        #[ai_description("Which issues to include.")] state: Option<IssueState>,
        #[ai_description("Labels to apply.")] labels: Option<Labels>,
    ) -> String {
        format!("list_issues {:?}", (repository, state, labels,))
    }

    /// Opens a new issue with a title and a body.
    #[ai_function]
    fn create_issue(
        &self,
        #[ai_description("The repository as owner/name.")] repository: String,
        #[ai_description("Markdown text.")] body: String,
        #[ai_description("Labels to apply.")] labels: Option<Labels>,
    ) -> String {
        format!("create_issue {:?}", (repository, body, labels,))
    }

    /// Adds a comment to an issue or pull request.
    #[ai_function]
    fn comment_issue(
        &self,
        #[ai_description("The repository as owner/name.")] repository: String,
        #[ai_description("The issue or pull request number.")] number: u64,
        #[ai_description("Markdown text.")] body: String,
    ) -> String {
        format!("comment_issue {:?}", (repository, number, body,))
    }

    /// Closes an issue, optionally with a final comment.
    #[ai_function]
    fn close_issue(
        &self,
        #[ai_description("The repository as owner/name.")] repository: String,
        #[ai_description("The issue or pull request number.")] number: u64,
        #[ai_description("Markdown text.")] body: Option<String>,
    ) -> String {
        format!("close_issue {:?}", (repository, number, body,))
    }

    /// Lists the pull requests of a repository.
    #[ai_function]
    fn list_pull_requests(
        &self,
        #[ai_description("The repository as owner/name.")] repository: String,
        #[ai_description("Which issues to include.")] state: Option<IssueState>,
    ) -> String {
        format!("list_pull_requests {:?}", (repository, state,))
    }

    /// Submits a review with a verdict and a summary comment.
    #[ai_function]
    fn review_pull_request(
        &self,
        #[ai_description("The repository as owner/name.")] repository: String,
        #[ai_description("The issue or pull request number.")] number: u64,
        #[ai_description("Markdown text.")] body: String,
    ) -> String {
        format!("review_pull_request {:?}", (repository, number, body,))
    }

    /// Merges a pull request when its checks have passed.
    #[ai_function]
    fn merge_pull_request(
        &self,
        #[ai_description("The repository as owner/name.")] repository: String,
        #[ai_description("The issue or pull request number.")] number: u64,
    ) -> String {
        format!("merge_pull_request {:?}", (repository, number,))
    }

    /// Searches code across repositories and returns matching paths.
    #[ai_function]
    fn search_code(
        &self,
        #[ai_description("Markdown text.")] body: String,
        #[ai_description("The repository as owner/name.")] repository: Option<String>,
    ) -> String {
        format!("search_code {:?}", (body, repository,))
    }
}

/// How to order the entries.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SortOrder {
    /// Name.
    Name,
    /// Modified.
    Modified,
    /// Size.
    Size,
}

/// The sharing settings.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct Sharing {
    /// Who to share with.
    pub email: String,
    /// Whether they may change the file.
    pub can_edit: bool,
}

/// Files and folders in cloud storage.
#[derive(Debug, Default)]
pub struct StorageTools;

#[collapse("Files and folders in cloud storage")]
impl StorageTools {
    /// Lists the entries of a folder.
    #[ai_function]
    fn list_folder(
        &self,
        #[ai_description("The path of the file or folder, from the storage root.")] path: String,
        #[ai_description("How to order the entries.")] sort: Option<SortOrder>,
    ) -> String {
        format!("list_folder {:?}", (path, sort,))
    }

    /// Returns the content of a text file.
    #[ai_function]
    fn read_text_file(
        &self,
        #[ai_description("The path of the file or folder, from the storage root.")] path: String,
    ) -> String {
        format!("read_text_file {:?}", (path,))
    }

    /// Creates or replaces a text file.
    #[ai_function]
    fn write_text_file(
        &self,
        #[ai_description("The path of the file or folder, from the storage root.")] path: String,
        #[ai_description("The text content.")] content: String,
    ) -> String {
        format!("write_text_file {:?}", (path, content,))
    }

    /// Moves or renames a file or folder.
    #[ai_function]
    fn move_entry(
        &self,
        #[ai_description("The path of the file or folder, from the storage root.")] path: String,
        #[ai_description("The text content.")] content: String,
    ) -> String {
        format!("move_entry {:?}", (path, content,))
    }

    /// Deletes a file or an empty folder.
    #[ai_function]
    fn delete_entry(
        &self,
        #[ai_description("The path of the file or folder, from the storage root.")] path: String,
    ) -> String {
        format!("delete_entry {:?}", (path,))
    }

    /// Shares a file or folder with another user.
    #[ai_function]
    fn share_entry(
        &self,
        #[ai_description("The path of the file or folder, from the storage root.")] path: String,
        #[ai_description("The sharing settings.")] sharing: Sharing,
    ) -> String {
        format!("share_entry {:?}", (path, sharing,))
    }

    /// Finds files whose name or content matches a query.
    #[ai_function]
    fn search_files(
        &self,
        #[ai_description("The text content.")] content: String,
        #[ai_description("Ignore files larger than this many kilobytes.")] size_limit_kb: Option<
            u64,
        >,
        #[ai_description("How to order the entries.")] sort: Option<SortOrder>,
    ) -> String {
        format!("search_files {:?}", (content, size_limit_kb, sort,))
    }

    /// Returns size, owner and modification time of an entry.
    #[ai_function]
    fn get_metadata(
        &self,
        #[ai_description("The path of the file or folder, from the storage root.")] path: String,
    ) -> String {
        format!("get_metadata {:?}", (path,))
    }
}

/// The transaction isolation level.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum IsolationLevel {
    /// ReadCommitted.
    ReadCommitted,
    /// RepeatableRead.
    RepeatableRead,
    /// Serializable.
    Serializable,
}

/// Which database to use and how.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct Connection {
    /// The database name.
    pub database: String,
    /// Open the session read-only.
    pub read_only: bool,
}

/// Query and administer the SQL database.
#[derive(Debug, Default)]
pub struct SqlTools;

#[collapse(
    "Query and administer the SQL database",
    system_prompt = "Prefer read-only queries; run statements that change data only when the user asks."
)]
impl SqlTools {
    /// Runs a read-only query and returns the rows as JSON.
    #[ai_function]
    fn run_query(
        &self,
        #[ai_description("One SQL statement.")] sql: String,
        #[ai_description("The largest number of rows to return.")] row_limit: Option<u32>,
        #[ai_description("Which database to use and how.")] connection: Option<Connection>,
    ) -> String {
        format!("run_query {:?}", (sql, row_limit, connection,))
    }

    /// Runs a statement that changes data and returns the affected row count.
    #[ai_function]
    fn run_statement(
        &self,
        #[ai_description("One SQL statement.")] sql: String,
        #[ai_description("The transaction isolation level.")] isolation: Option<IsolationLevel>,
    ) -> String {
        format!("run_statement {:?}", (sql, isolation,))
    }

    /// Returns the columns, types and indexes of a table.
    #[ai_function]
    fn describe_table(
        &self,
        #[ai_description("The table name, optionally schema-qualified.")] table: String,
    ) -> String {
        format!("describe_table {:?}", (table,))
    }

    /// Lists the tables of a database.
    #[ai_function]
    fn list_tables(
        &self,
        #[ai_description("Which database to use and how.")] connection: Option<Connection>,
    ) -> String {
        format!("list_tables {:?}", (connection,))
    }

    /// Returns the query plan of a statement without running it.
    #[ai_function]
    fn explain_query(&self, #[ai_description("One SQL statement.")] sql: String) -> String {
        format!("explain_query {:?}", (sql,))
    }

    /// Returns the row count and disk size of a table.
    #[ai_function]
    fn table_size(
        &self,
        #[ai_description("The table name, optionally schema-qualified.")] table: String,
    ) -> String {
        format!("table_size {:?}", (table,))
    }

    /// Creates an index on the given columns of a table.
    #[ai_function]
    fn create_index(
        &self,
        #[ai_description("The table name, optionally schema-qualified.")] table: String,
        #[ai_description("One SQL statement.")] sql: String,
    ) -> String {
        format!("create_index {:?}", (table, sql,))
    }

    /// Reclaims space and refreshes statistics of a table.
    #[ai_function]
    fn vacuum_table(
        &self,
        #[ai_description("The table name, optionally schema-qualified.")] table: String,
        #[ai_description("The transaction isolation level.")] isolation: Option<IsolationLevel>,
    ) -> String {
        format!("vacuum_table {:?}", (table, isolation,))
    }
}

/// The unit system of the values.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Units {
    /// Metric.
    Metric,
    /// Imperial.
    Imperial,
    /// Standard.
    Standard,
}

/// A point on Earth.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct Coordinates {
    /// Degrees north.
    pub latitude: f64,
    /// Degrees east.
    pub longitude: f64,
}

/// Current weather, forecasts and alerts.
#[derive(Debug, Default)]
pub struct WeatherService;

#[collapse("Current weather, forecasts and alerts")]
impl WeatherService {
    /// Returns temperature, wind, humidity and conditions now.
    #[ai_function]
    fn current_weather(
        &self,
        #[ai_description("A city name or a latitude,longitude pair.")] location: String,
        #[ai_description("The unit system of the values.")] units: Option<Units>,
    ) -> String {
        format!("current_weather {:?}", (location, units,))
    }

    /// Returns the daily forecast for the coming days.
    #[ai_function]
    fn daily_forecast(
        &self,
        #[ai_description("A city name or a latitude,longitude pair.")] location: String,
        #[ai_description("How many days ahead, 1 to 14.")] days: u8,
        #[ai_description("The unit system of the values.")] units: Option<Units>,
    ) -> String {
        format!("daily_forecast {:?}", (location, days, units,))
    }

    /// Returns the hourly forecast for the next 48 hours.
    #[ai_function]
    fn hourly_forecast(
        &self,
        #[ai_description("A point on Earth.")] coordinates: Coordinates,
        #[ai_description("The unit system of the values.")] units: Option<Units>,
    ) -> String {
        format!("hourly_forecast {:?}", (coordinates, units,))
    }

    /// Lists active severe-weather alerts for a location.
    #[ai_function]
    fn weather_alerts(
        &self,
        #[ai_description("A city name or a latitude,longitude pair.")] location: String,
        #[ai_description("The language of textual descriptions, as an IETF tag.")] language: Option<
            String,
        >,
    ) -> String {
        format!("weather_alerts {:?}", (location, language,))
    }

    /// Returns the air quality index and pollutant levels.
    #[ai_function]
    fn air_quality(
        &self,
        #[ai_description("A point on Earth.")] coordinates: Coordinates,
    ) -> String {
        format!("air_quality {:?}", (coordinates,))
    }

    /// Returns the observed weather for a past date.
    #[ai_function]
    fn historical_weather(
        &self,
        #[ai_description("A city name or a latitude,longitude pair.")] location: String,
        #[ai_description("The language of textual descriptions, as an IETF tag.")] language: String,
    ) -> String {
        format!("historical_weather {:?}", (location, language,))
    }

    /// Returns sunrise and sunset times for a date.
    #[ai_function]
    fn sunrise_sunset(
        &self,
        #[ai_description("A point on Earth.")] coordinates: Coordinates,
        #[ai_description("The language of textual descriptions, as an IETF tag.")] language: Option<
            String,
        >,
    ) -> String {
        format!("sunrise_sunset {:?}", (coordinates, language,))
    }

    /// Returns the UV index forecast for the coming days.
    #[ai_function]
    fn uv_index(
        &self,
        #[ai_description("A city name or a latitude,longitude pair.")] location: String,
        #[ai_description("How many days ahead, 1 to 14.")] days: Option<u8>,
    ) -> String {
        format!("uv_index {:?}", (location, days,))
    }
}

/// How to travel.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TravelMode {
    /// Driving.
    Driving,
    /// Walking.
    Walking,
    /// Cycling.
    Cycling,
    /// Transit.
    Transit,
}

/// The starting point.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct LatLng {
    /// Latitude in degrees.
    pub lat: f64,
    /// Longitude in degrees.
    pub lng: f64,
}

/// Geocoding, places and routes.
#[derive(Debug, Default)]
pub struct MapsTools;

#[collapse("Geocoding, places and routes")]
impl MapsTools {
    /// Turns an address into coordinates.
    #[ai_function]
    fn geocode(
        &self,
        #[ai_description("A postal address or place name.")] address: String,
    ) -> String {
        format!("geocode {:?}", (address,))
    }

    /// Turns coordinates into the nearest address.
    #[ai_function]
    fn reverse_geocode(&self, #[ai_description("The starting point.")] origin: LatLng) -> String {
        format!("reverse_geocode {:?}", (origin,))
    }

    /// Finds places matching a query near a point.
    #[ai_function]
    fn search_places(
        &self,
        #[ai_description("A postal address or place name.")] address: String,
        #[ai_description("The starting point.")] origin: LatLng,
        #[ai_description("Search radius in metres.")] radius_m: Option<u32>,
    ) -> String {
        format!("search_places {:?}", (address, origin, radius_m,))
    }

    /// Returns opening hours, rating and contact details of a place.
    #[ai_function]
    fn place_details(
        &self,
        #[ai_description("The identifier of a place.")] place_id: String,
    ) -> String {
        format!("place_details {:?}", (place_id,))
    }

    /// Returns a route with turn-by-turn steps.
    #[ai_function]
    fn directions(
        &self,
        #[ai_description("The starting point.")] origin: LatLng,
        #[ai_description("A postal address or place name.")] address: String,
        #[ai_description("How to travel.")] mode: Option<TravelMode>,
    ) -> String {
        format!("directions {:?}", (origin, address, mode,))
    }

    /// Estimates travel time between two points.
    #[ai_function]
    fn travel_time(
        &self,
        #[ai_description("The starting point.")] origin: LatLng,
        #[ai_description("A postal address or place name.")] address: String,
        #[ai_description("How to travel.")] mode: TravelMode,
    ) -> String {
        format!("travel_time {:?}", (origin, address, mode,))
    }

    /// Lists public transport stops near a point.
    #[ai_function]
    fn nearby_transit(
        &self,
        #[ai_description("The starting point.")] origin: LatLng,
        #[ai_description("Search radius in metres.")] radius_m: Option<u32>,
    ) -> String {
        format!("nearby_transit {:?}", (origin, radius_m,))
    }

    /// Returns the URL of a map image centred on a place.
    #[ai_function]
    fn static_map_url(
        &self,
        #[ai_description("The identifier of a place.")] place_id: String,
        #[ai_description("Search radius in metres.")] radius_m: Option<u32>,
    ) -> String {
        format!("static_map_url {:?}", (place_id, radius_m,))
    }
}

/// The ISO currency.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Currency {
    /// Usd.
    Usd,
    /// Eur.
    Eur,
    /// Gbp.
    Gbp,
    /// Jpy.
    Jpy,
}

/// The payment method.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct Card {
    /// A tokenised card.
    pub token: String,
    /// Keep the card for later charges.
    pub save: bool,
}

/// Charges, refunds, customers and invoices.
#[derive(Debug, Default)]
pub struct PaymentsTools;

#[collapse("Charges, refunds, customers and invoices")]
impl PaymentsTools {
    /// Charges a customer's card.
    #[ai_function]
    fn create_charge(
        &self,
        #[ai_description("The identifier of the customer.")] customer_id: String,
        #[ai_description("The amount in the currency's major unit.")] amount: f64,
        #[ai_description("The ISO currency.")] currency: Currency,
        #[ai_description("The payment method.")] card: Option<Card>,
    ) -> String {
        format!("create_charge {:?}", (customer_id, amount, currency, card,))
    }

    /// Refunds a charge fully or partly.
    #[ai_function]
    fn refund_charge(
        &self,
        #[ai_description("A description shown on the statement.")] description: String,
        #[ai_description("The amount in the currency's major unit.")] amount: Option<f64>,
    ) -> String {
        format!("refund_charge {:?}", (description, amount,))
    }

    /// Returns a customer's profile and saved payment methods.
    #[ai_function]
    fn get_customer(
        &self,
        #[ai_description("The identifier of the customer.")] customer_id: String,
    ) -> String {
        format!("get_customer {:?}", (customer_id,))
    }

    /// Creates a customer record.
    #[ai_function]
    fn create_customer(
        &self,
        #[ai_description("A description shown on the statement.")] description: String,
        #[ai_description("The payment method.")] card: Option<Card>,
    ) -> String {
        format!("create_customer {:?}", (description, card,))
    }

    /// Lists a customer's invoices, newest first.
    #[ai_function]
    fn list_invoices(
        &self,
        #[ai_description("The identifier of the customer.")] customer_id: String,
        #[ai_description("The amount in the currency's major unit.")] amount: Option<f64>,
    ) -> String {
        format!("list_invoices {:?}", (customer_id, amount,))
    }

    /// Emails an invoice to its customer.
    #[ai_function]
    fn send_invoice(
        &self,
        #[ai_description("A description shown on the statement.")] description: String,
    ) -> String {
        format!("send_invoice {:?}", (description,))
    }

    /// Starts a recurring subscription for a customer.
    #[ai_function]
    fn create_subscription(
        &self,
        #[ai_description("The identifier of the customer.")] customer_id: String,
        #[ai_description("A description shown on the statement.")] description: String,
        #[ai_description("The ISO currency.")] currency: Currency,
    ) -> String {
        format!(
            "create_subscription {:?}",
            (customer_id, description, currency,)
        )
    }

    /// Returns the account balance by currency.
    #[ai_function]
    fn balance(&self, #[ai_description("The ISO currency.")] currency: Option<Currency>) -> String {
        format!("balance {:?}", (currency,))
    }
}

/// The pipeline stage.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DealStage {
    /// Lead.
    Lead,
    /// Qualified.
    Qualified,
    /// Proposal.
    Proposal,
    /// Won.
    Won,
    /// Lost.
    Lost,
}

/// The contact's details.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ContactInfo {
    /// Full name.
    pub name: String,
    /// Email address.
    pub email: String,
    /// Phone number.
    pub phone: Option<String>,
}

/// Contacts, companies and deals in the CRM.
#[derive(Debug, Default)]
pub struct CrmTools;

#[collapse("Contacts, companies and deals in the CRM")]
impl CrmTools {
    /// Finds contacts by name, email or company.
    #[ai_function]
    fn find_contact(
        &self,
        #[ai_description("Free text.")] note: String,
        #[ai_description("The expected value of the deal.")] deal_value: Option<f64>,
    ) -> String {
        format!("find_contact {:?}", (note, deal_value,))
    }

    /// Creates a contact.
    #[ai_function]
    fn create_contact(
        &self,
        #[ai_description("The contact's details.")] info: ContactInfo,
    ) -> String {
        format!("create_contact {:?}", (info,))
    }

    /// Changes a contact's details.
    #[ai_function]
    fn update_contact(
        &self,
        #[ai_description("The identifier of the contact.")] contact_id: String,
        #[ai_description("The contact's details.")] info: ContactInfo,
    ) -> String {
        format!("update_contact {:?}", (contact_id, info,))
    }

    /// Logs a call, meeting or email with a contact.
    #[ai_function]
    fn log_activity(
        &self,
        #[ai_description("The identifier of the contact.")] contact_id: String,
        #[ai_description("Free text.")] note: String,
    ) -> String {
        format!("log_activity {:?}", (contact_id, note,))
    }

    /// Opens a deal for a contact.
    #[ai_function]
    fn create_deal(
        &self,
        #[ai_description("The identifier of the contact.")] contact_id: String,
        #[ai_description("The expected value of the deal.")] deal_value: f64,
        #[ai_description("The pipeline stage.")] stage: Option<DealStage>,
    ) -> String {
        format!("create_deal {:?}", (contact_id, deal_value, stage,))
    }

    /// Moves a deal to another pipeline stage.
    #[ai_function]
    fn move_deal(
        &self,
        #[ai_description("The identifier of the contact.")] contact_id: String,
        #[ai_description("The pipeline stage.")] stage: DealStage,
    ) -> String {
        format!("move_deal {:?}", (contact_id, stage,))
    }

    /// Lists open deals, largest first.
    #[ai_function]
    fn list_deals(
        &self,
        #[ai_description("The pipeline stage.")] stage: Option<DealStage>,
        #[ai_description("The expected value of the deal.")] deal_value: Option<f64>,
    ) -> String {
        format!("list_deals {:?}", (stage, deal_value,))
    }

    /// Merges a duplicate contact into another.
    #[ai_function]
    fn merge_contacts(
        &self,
        #[ai_description("The identifier of the contact.")] contact_id: String,
        #[ai_description("Free text.")] note: String,
    ) -> String {
        format!("merge_contacts {:?}", (contact_id, note,))
    }
}

/// The file format.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ExportFormat {
    /// Pdf.
    Pdf,
    /// Docx.
    Docx,
    /// Markdown.
    Markdown,
    /// Html.
    Html,
}

/// Where in the document.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct Position {
    /// Paragraph index, from 0.
    pub paragraph: u32,
    /// Character offset in the paragraph.
    pub offset: u32,
}

/// Create and edit shared documents.
#[derive(Debug, Default)]
pub struct DocsTools;

#[collapse("Create and edit shared documents")]
impl DocsTools {
    /// Creates a document with a title and initial text.
    #[ai_function]
    fn create_document(
        &self,
        #[ai_description("Markdown text.")] text: String,
        #[ai_description("Markdown text.")] subject: Option<String>,
    ) -> String {
        format!("create_document {:?}", (text, subject,))
    }

    /// Returns the text of a document.
    #[ai_function]
    fn read_document(
        &self,
        #[ai_description("The identifier of the document.")] document_id: String,
        #[ai_description("A revision number.")] revision: Option<u64>,
    ) -> String {
        format!("read_document {:?}", (document_id, revision,))
    }

    /// Inserts text at a position.
    #[ai_function]
    fn insert_text(
        &self,
        #[ai_description("The identifier of the document.")] document_id: String,
        #[ai_description("Where in the document.")] at: Position,
        #[ai_description("Markdown text.")] text: String,
    ) -> String {
        format!("insert_text {:?}", (document_id, at, text,))
    }

    /// Replaces every occurrence of a phrase.
    #[ai_function]
    fn replace_text(
        &self,
        #[ai_description("The identifier of the document.")] document_id: String,
        #[ai_description("Markdown text.")] text: String,
    ) -> String {
        format!("replace_text {:?}", (document_id, text,))
    }

    /// Adds a comment anchored at a position.
    #[ai_function]
    fn add_comment(
        &self,
        #[ai_description("The identifier of the document.")] document_id: String,
        #[ai_description("Where in the document.")] at: Position,
        #[ai_description("Markdown text.")] text: String,
    ) -> String {
        format!("add_comment {:?}", (document_id, at, text,))
    }

    /// Lists the revisions of a document.
    #[ai_function]
    fn list_revisions(
        &self,
        #[ai_description("The identifier of the document.")] document_id: String,
    ) -> String {
        format!("list_revisions {:?}", (document_id,))
    }

    /// Exports a document to another format.
    #[ai_function]
    fn export_document(
        &self,
        #[ai_description("The identifier of the document.")] document_id: String,
        #[ai_description("The file format.")] format: ExportFormat,
    ) -> String {
        format!("export_document {:?}", (document_id, format,))
    }

    /// Shares a document with a user.
    #[ai_function]
    fn share_document(
        &self,
        #[ai_description("The identifier of the document.")] document_id: String,
        #[ai_description("Markdown text.")] text: String,
    ) -> String {
        format!("share_document {:?}", (document_id, text,))
    }
}

/// How written values are interpreted.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ValueInput {
    /// Raw.
    Raw,
    /// UserEntered.
    UserEntered,
}

/// The cell format.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct CellFormat {
    /// Bold text.
    pub bold: bool,
    /// A number format pattern.
    pub number_format: Option<String>,
}

/// Read and write spreadsheets.
#[derive(Debug, Default)]
pub struct SheetsTools;

#[collapse("Read and write spreadsheets")]
impl SheetsTools {
    /// Returns the values of a range.
    #[ai_function]
    fn read_range(
        &self,
        #[ai_description("The identifier of the spreadsheet.")] spreadsheet_id: String,
        #[ai_description("A cell range in A1 notation.")] range: String,
    ) -> String {
        format!("read_range {:?}", (spreadsheet_id, range,))
    }

    /// Writes values into a range.
    #[ai_function]
    fn write_range(
        &self,
        #[ai_description("The identifier of the spreadsheet.")] spreadsheet_id: String,
        #[ai_description("A cell range in A1 notation.")] range: String,
        #[ai_description("How written values are interpreted.")] input: Option<ValueInput>,
    ) -> String {
        format!("write_range {:?}", (spreadsheet_id, range, input,))
    }

    /// Appends rows after the last row with data.
    #[ai_function]
    fn append_rows(
        &self,
        #[ai_description("The identifier of the spreadsheet.")] spreadsheet_id: String,
        #[ai_description("A cell range in A1 notation.")] range: String,
    ) -> String {
        format!("append_rows {:?}", (spreadsheet_id, range,))
    }

    /// Clears the values of a range.
    #[ai_function]
    fn clear_range(
        &self,
        #[ai_description("The identifier of the spreadsheet.")] spreadsheet_id: String,
        #[ai_description("A cell range in A1 notation.")] range: String,
    ) -> String {
        format!("clear_range {:?}", (spreadsheet_id, range,))
    }

    /// Adds a sheet.
    #[ai_function]
    fn add_sheet(
        &self,
        #[ai_description("The identifier of the spreadsheet.")] spreadsheet_id: String,
        #[ai_description("A cell range in A1 notation.")] range: String,
    ) -> String {
        format!("add_sheet {:?}", (spreadsheet_id, range,))
    }

    /// Applies a format to a range.
    #[ai_function]
    fn format_range(
        &self,
        #[ai_description("The identifier of the spreadsheet.")] spreadsheet_id: String,
        #[ai_description("A cell range in A1 notation.")] range: String,
        #[ai_description("The cell format.")] format: CellFormat,
    ) -> String {
        format!("format_range {:?}", (spreadsheet_id, range, format,))
    }

    /// Sorts a range by a column.
    #[ai_function]
    fn sort_range(
        &self,
        #[ai_description("The identifier of the spreadsheet.")] spreadsheet_id: String,
        #[ai_description("A cell range in A1 notation.")] range: String,
        #[ai_description("The sheet's index, from 0.")] sheet_index: u32,
    ) -> String {
        format!("sort_range {:?}", (spreadsheet_id, range, sheet_index,))
    }

    /// Lists the sheets of a spreadsheet.
    #[ai_function]
    fn list_sheets(
        &self,
        #[ai_description("The identifier of the spreadsheet.")] spreadsheet_id: String,
    ) -> String {
        format!("list_sheets {:?}", (spreadsheet_id,))
    }
}

/// A presence status.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Presence {
    /// Active.
    Active,
    /// Away.
    Away,
    /// DoNotDisturb.
    DoNotDisturb,
}

/// A thread to reply in.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct Thread {
    /// Timestamp of the parent message.
    pub parent_ts: String,
    /// Also post to the channel.
    pub broadcast: bool,
}

/// Team chat channels and messages.
#[derive(Debug, Default)]
pub struct ChatTools;

#[collapse("Team chat channels and messages")]
impl ChatTools {
    /// Posts a message to a channel.
    #[ai_function]
    fn post_message(
        &self,
        #[ai_description("The channel name or identifier.")] channel: String,
        #[ai_description("Message text, with markdown.")] text: String,
        #[ai_description("A thread to reply in.")] thread: Option<Thread>,
    ) -> String {
        format!("post_message {:?}", (channel, text, thread,))
    }

    /// Returns the latest messages of a channel.
    #[ai_function]
    fn channel_history(
        &self,
        #[ai_description("The channel name or identifier.")] channel: String,
        #[ai_description("How many messages to return.")] limit: Option<u32>,
    ) -> String {
        format!("channel_history {:?}", (channel, limit,))
    }

    /// Searches messages across channels.
    #[ai_function]
    fn search_chat(
        &self,
        #[ai_description("Message text, with markdown.")] text: String,
        #[ai_description("How many messages to return.")] limit: Option<u32>,
    ) -> String {
        format!("search_chat {:?}", (text, limit,))
    }

    /// Creates a channel.
    #[ai_function]
    fn create_channel(
        &self,
        #[ai_description("The channel name or identifier.")] channel: String,
        #[ai_description("Message text, with markdown.")] text: Option<String>,
    ) -> String {
        format!("create_channel {:?}", (channel, text,))
    }

    /// Invites users to a channel.
    #[ai_function]
    fn invite_to_channel(
        &self,
        #[ai_description("The channel name or identifier.")] channel: String,
        #[ai_description("Message text, with markdown.")] text: String,
    ) -> String {
        format!("invite_to_channel {:?}", (channel, text,))
    }

    /// Adds an emoji reaction to a message.
    #[ai_function]
    fn add_reaction(
        &self,
        #[ai_description("The channel name or identifier.")] channel: String,
        #[ai_description("Message text, with markdown.")] text: String,
    ) -> String {
        format!("add_reaction {:?}", (channel, text,))
    }

    /// Sets the user's presence.
    #[ai_function]
    fn set_presence(&self, #[ai_description("A presence status.")] presence: Presence) -> String {
        format!("set_presence {:?}", (presence,))
    }

    /// Pins a message in a channel.
    #[ai_function]
    fn pin_message(
        &self,
        #[ai_description("The channel name or identifier.")] channel: String,
        #[ai_description("Message text, with markdown.")] text: String,
    ) -> String {
        format!("pin_message {:?}", (channel, text,))
    }
}

/// The alert severity.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Info.
    Info,
    /// Warning.
    Warning,
    /// Critical.
    Critical,
}

/// When the alert fires.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct Threshold {
    /// The threshold value.
    pub value: f64,
    /// How long it must hold.
    pub for_minutes: u32,
}

/// Metrics, logs and alerts of production services.
#[derive(Debug, Default)]
pub struct MonitoringTools;

#[collapse("Metrics, logs and alerts of production services")]
impl MonitoringTools {
    /// Evaluates a metrics query over a time span.
    #[ai_function]
    fn query_metrics(
        &self,
        #[ai_description("A query in the metrics language.")] query: String,
        #[ai_description("How far back to look, in minutes.")] minutes: Option<u32>,
    ) -> String {
        format!("query_metrics {:?}", (query, minutes,))
    }

    /// Searches the logs of a service.
    #[ai_function]
    fn search_logs(
        &self,
        #[ai_description("The service name.")] service: String,
        #[ai_description("A query in the metrics language.")] query: String,
        #[ai_description("How far back to look, in minutes.")] minutes: Option<u32>,
    ) -> String {
        format!("search_logs {:?}", (service, query, minutes,))
    }

    /// Lists firing alerts.
    #[ai_function]
    fn list_alerts(
        &self,
        #[ai_description("The alert severity.")] severity: Option<Severity>,
    ) -> String {
        format!("list_alerts {:?}", (severity,))
    }

    /// Creates an alert rule on a metric.
    #[ai_function]
    fn create_alert(
        &self,
        #[ai_description("The service name.")] service: String,
        #[ai_description("A query in the metrics language.")] query: String,
        #[ai_description("When the alert fires.")] threshold: Threshold,
        #[ai_description("The alert severity.")] severity: Severity,
    ) -> String {
        format!("create_alert {:?}", (service, query, threshold, severity,))
    }

    /// Silences an alert for some minutes.
    #[ai_function]
    fn silence_alert(
        &self,
        #[ai_description("The service name.")] service: String,
        #[ai_description("How far back to look, in minutes.")] minutes: u32,
    ) -> String {
        format!("silence_alert {:?}", (service, minutes,))
    }

    /// Returns error rate, latency and saturation of a service.
    #[ai_function]
    fn service_health(&self, #[ai_description("The service name.")] service: String) -> String {
        format!("service_health {:?}", (service,))
    }

    /// Lists the dashboards of a service.
    #[ai_function]
    fn list_dashboards(
        &self,
        #[ai_description("The service name.")] service: Option<String>,
    ) -> String {
        format!("list_dashboards {:?}", (service,))
    }

    /// Returns the events of an incident.
    #[ai_function]
    fn incident_timeline(
        &self,
        #[ai_description("A query in the metrics language.")] query: String,
    ) -> String {
        format!("incident_timeline {:?}", (query,))
    }
}

/// The resource kind.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ResourceKind {
    /// Pod.
    Pod,
    /// Deployment.
    Deployment,
    /// Service.
    Service,
    /// ConfigMap.
    ConfigMap,
}

/// A label selector.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct Selector {
    /// Label key.
    pub key: String,
    /// Label value.
    pub value: String,
}

/// Workloads and resources of the Kubernetes cluster.
#[derive(Debug, Default)]
pub struct KubernetesTools;

#[collapse("Workloads and resources of the Kubernetes cluster")]
impl KubernetesTools {
    /// Lists resources of a kind in a namespace.
    #[ai_function]
    fn list_resources(
        &self,
        #[ai_description("The resource kind.")] kind: ResourceKind,
        #[ai_description("The namespace.")] namespace: Option<String>,
        #[ai_description("A label selector.")] selector: Option<Selector>,
    ) -> String {
        format!("list_resources {:?}", (kind, namespace, selector,))
    }

    /// Returns the status and events of a resource.
    #[ai_function]
    fn describe_resource(
        &self,
        #[ai_description("The resource kind.")] kind: ResourceKind,
        #[ai_description("The resource name.")] name: String,
        #[ai_description("The namespace.")] namespace: Option<String>,
    ) -> String {
        format!("describe_resource {:?}", (kind, name, namespace,))
    }

    /// Returns the latest log lines of a pod.
    #[ai_function]
    fn pod_logs(
        &self,
        #[ai_description("The resource name.")] name: String,
        #[ai_description("The namespace.")] namespace: Option<String>,
        #[ai_description("The desired replica count.")] replicas: Option<u32>,
    ) -> String {
        format!("pod_logs {:?}", (name, namespace, replicas,))
    }

    /// Changes the replica count of a deployment.
    #[ai_function]
    fn scale_deployment(
        &self,
        #[ai_description("The resource name.")] name: String,
        #[ai_description("The desired replica count.")] replicas: u32,
        #[ai_description("The namespace.")] namespace: Option<String>,
    ) -> String {
        format!("scale_deployment {:?}", (name, replicas, namespace,))
    }

    /// Restarts the pods of a deployment.
    #[ai_function]
    fn restart_deployment(
        &self,
        #[ai_description("The resource name.")] name: String,
        #[ai_description("The namespace.")] namespace: Option<String>,
    ) -> String {
        format!("restart_deployment {:?}", (name, namespace,))
    }

    /// Applies a YAML manifest.
    #[ai_function]
    fn apply_manifest(&self, #[ai_description("The namespace.")] namespace: String) -> String {
        format!("apply_manifest {:?}", (namespace,))
    }

    /// Deletes a resource.
    #[ai_function]
    fn delete_resource(
        &self,
        #[ai_description("The resource kind.")] kind: ResourceKind,
        #[ai_description("The resource name.")] name: String,
        #[ai_description("The namespace.")] namespace: Option<String>,
    ) -> String {
        format!("delete_resource {:?}", (kind, name, namespace,))
    }

    /// Returns the rollout status of a deployment.
    #[ai_function]
    fn rollout_status(
        &self,
        #[ai_description("The resource name.")] name: String,
        #[ai_description("The namespace.")] namespace: Option<String>,
    ) -> String {
        format!("rollout_status {:?}", (name, namespace,))
    }
}

/// The ticket priority.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Priority {
    /// Low.
    Low,
    /// Normal.
    Normal,
    /// High.
    High,
    /// Urgent.
    Urgent,
}

/// Who asked.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct Requester {
    /// The requester's email.
    pub email: String,
    /// Their name.
    pub name: Option<String>,
}

/// Support tickets and help-desk queues.
#[derive(Debug, Default)]
pub struct TicketTools;

#[collapse("Support tickets and help-desk queues")]
impl TicketTools {
    /// Searches tickets by text, status or assignee.
    #[ai_function]
    fn search_tickets(
        &self,
        #[ai_description("A comment for the requester or agents.")] comment: String,
        #[ai_description("The result page, from 1.")] page: Option<u32>,
    ) -> String {
        format!("search_tickets {:?}", (comment, page,))
    }

    /// Returns a ticket with its conversation.
    #[ai_function]
    fn get_ticket(
        &self,
        #[ai_description("The identifier of the ticket.")] ticket_id: String,
    ) -> String {
        format!("get_ticket {:?}", (ticket_id,))
    }

    /// Opens a ticket.
    #[ai_function]
    fn create_ticket(
        &self,
        #[ai_description("A comment for the requester or agents.")] comment: String,
        #[ai_description("Who asked.")] requester: Requester,
        #[ai_description("The ticket priority.")] priority: Option<Priority>,
    ) -> String {
        format!("create_ticket {:?}", (comment, requester, priority,))
    }

    /// Replies to the requester.
    #[ai_function]
    fn reply_ticket(
        &self,
        #[ai_description("The identifier of the ticket.")] ticket_id: String,
        #[ai_description("A comment for the requester or agents.")] comment: String,
    ) -> String {
        format!("reply_ticket {:?}", (ticket_id, comment,))
    }

    /// Adds a note only agents see.
    #[ai_function]
    fn add_internal_note(
        &self,
        #[ai_description("The identifier of the ticket.")] ticket_id: String,
        #[ai_description("A comment for the requester or agents.")] comment: String,
    ) -> String {
        format!("add_internal_note {:?}", (ticket_id, comment,))
    }

    /// Changes a ticket's priority.
    #[ai_function]
    fn set_priority(
        &self,
        #[ai_description("The identifier of the ticket.")] ticket_id: String,
        #[ai_description("The ticket priority.")] priority: Priority,
    ) -> String {
        format!("set_priority {:?}", (ticket_id, priority,))
    }

    /// Assigns a ticket to an agent or group.
    #[ai_function]
    fn assign_ticket(
        &self,
        #[ai_description("The identifier of the ticket.")] ticket_id: String,
        #[ai_description("A comment for the requester or agents.")] comment: String,
    ) -> String {
        format!("assign_ticket {:?}", (ticket_id, comment,))
    }

    /// Solves and closes a ticket.
    #[ai_function]
    fn close_ticket(
        &self,
        #[ai_description("The identifier of the ticket.")] ticket_id: String,
        #[ai_description("A comment for the requester or agents.")] comment: Option<String>,
    ) -> String {
        format!("close_ticket {:?}", (ticket_id, comment,))
    }
}

/// The register of the translation.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Formality {
    /// Default.
    Default,
    /// More.
    More,
    /// Less.
    Less,
}

/// Fixed term translations.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct Glossary {
    /// Source terms.
    pub terms: Vec<String>,
    /// Their fixed translations.
    pub translations: Vec<String>,
}

/// Translate and detect languages.
#[derive(Debug, Default)]
pub struct TranslationTools;

#[collapse("Translate and detect languages")]
impl TranslationTools {
    /// Translates text into a target language.
    #[ai_function]
    fn translate(
        &self,
        #[ai_description("The text to work on.")] text: String,
        #[ai_description("The target language as an IETF tag.")] target_language: String,
        #[ai_description("The register of the translation.")] formality: Option<Formality>,
        #[ai_description("Fixed term translations.")] glossary: Option<Glossary>,
    ) -> String {
        format!(
            "translate {:?}",
            (text, target_language, formality, glossary,)
        )
    }

    /// Detects the language of a text.
    #[ai_function]
    fn detect_language(&self, #[ai_description("The text to work on.")] text: String) -> String {
        format!("detect_language {:?}", (text,))
    }

    /// Lists supported languages.
    #[ai_function]
    fn list_languages(
        &self,
        #[ai_description("The target language as an IETF tag.")] target_language: Option<String>,
    ) -> String {
        format!("list_languages {:?}", (target_language,))
    }

    /// Converts text into another script.
    #[ai_function]
    fn transliterate(
        &self,
        #[ai_description("The text to work on.")] text: String,
        #[ai_description("The target language as an IETF tag.")] target_language: String,
    ) -> String {
        format!("transliterate {:?}", (text, target_language,))
    }

    /// Translates a document given as a URL.
    #[ai_function]
    fn translate_document(
        &self,
        #[ai_description("The text to work on.")] text: String,
        #[ai_description("The target language as an IETF tag.")] target_language: String,
    ) -> String {
        format!("translate_document {:?}", (text, target_language,))
    }

    /// Returns alternative translations of a phrase.
    #[ai_function]
    fn alternatives(
        &self,
        #[ai_description("The text to work on.")] text: String,
        #[ai_description("The target language as an IETF tag.")] target_language: String,
        #[ai_description("How many alternative translations to return.")] max_alternatives: u8,
    ) -> String {
        format!(
            "alternatives {:?}",
            (text, target_language, max_alternatives,)
        )
    }

    /// Stores a glossary for later translations.
    #[ai_function]
    fn create_glossary(
        &self,
        #[ai_description("The target language as an IETF tag.")] target_language: String,
        #[ai_description("Fixed term translations.")] glossary: Glossary,
    ) -> String {
        format!("create_glossary {:?}", (target_language, glossary,))
    }

    /// Returns characters translated this month.
    #[ai_function]
    fn usage(&self) -> String {
        "usage".to_owned()
    }
}

/// The output format.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ImageFormat {
    /// Png.
    Png,
    /// Jpeg.
    Jpeg,
    /// Webp.
    Webp,
}

/// A square crop.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct Crop {
    /// Left edge.
    pub x: u32,
    /// Top edge.
    pub y: u32,
    /// Side length.
    pub size: u32,
}

/// Generate, edit and analyse images.
#[derive(Debug, Default)]
pub struct ImageTools;

#[collapse("Generate, edit and analyse images")]
impl ImageTools {
    /// Generates an image from a prompt.
    #[ai_function]
    fn generate_image(
        &self,
        #[ai_description("A description of the desired image.")] prompt: String,
        #[ai_description("Width in pixels.")] width: Option<u32>,
        #[ai_description("The output format.")] format: Option<ImageFormat>,
    ) -> String {
        format!("generate_image {:?}", (prompt, width, format,))
    }

    /// Edits an image following a prompt.
    #[ai_function]
    fn edit_image(
        &self,
        #[ai_description("The URL of the image.")] image_url: String,
        #[ai_description("A description of the desired image.")] prompt: String,
    ) -> String {
        format!("edit_image {:?}", (image_url, prompt,))
    }

    /// Returns a caption and the objects seen.
    #[ai_function]
    fn describe_image(
        &self,
        #[ai_description("The URL of the image.")] image_url: String,
    ) -> String {
        format!("describe_image {:?}", (image_url,))
    }

    /// Crops an image.
    #[ai_function]
    fn crop_image(
        &self,
        #[ai_description("The URL of the image.")] image_url: String,
        #[ai_description("A square crop.")] crop: Crop,
    ) -> String {
        format!("crop_image {:?}", (image_url, crop,))
    }

    /// Resizes an image keeping its aspect ratio.
    #[ai_function]
    fn resize_image(
        &self,
        #[ai_description("The URL of the image.")] image_url: String,
        #[ai_description("Width in pixels.")] width: u32,
    ) -> String {
        format!("resize_image {:?}", (image_url, width,))
    }

    /// Converts an image to another format.
    #[ai_function]
    fn convert_image(
        &self,
        #[ai_description("The URL of the image.")] image_url: String,
        #[ai_description("The output format.")] format: ImageFormat,
    ) -> String {
        format!("convert_image {:?}", (image_url, format,))
    }

    /// Reads the text in an image.
    #[ai_function]
    fn extract_text(
        &self,
        #[ai_description("The URL of the image.")] image_url: String,
        #[ai_description("A description of the desired image.")] prompt: Option<String>,
    ) -> String {
        format!("extract_text {:?}", (image_url, prompt,))
    }

    /// Makes the background transparent.
    #[ai_function]
    fn remove_background(
        &self,
        #[ai_description("The URL of the image.")] image_url: String,
    ) -> String {
        format!("remove_background {:?}", (image_url,))
    }
}

/// The cabin class.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CabinClass {
    /// Economy.
    Economy,
    /// PremiumEconomy.
    PremiumEconomy,
    /// Business.
    Business,
    /// First.
    First,
}

/// The travel dates.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct DateRange {
    /// First day, YYYY-MM-DD.
    pub from: String,
    /// Last day, YYYY-MM-DD.
    pub to: String,
}

/// Flights, hotels and bookings.
#[derive(Debug, Default)]
pub struct TravelTools;

#[collapse("Flights, hotels and bookings")]
impl TravelTools {
    /// Searches flights to a destination on given dates.
    #[ai_function]
    fn search_flights(
        &self,
        #[ai_description("A city or airport code.")] destination: String,
        #[ai_description("The travel dates.")] dates: DateRange,
        #[ai_description("Number of travellers.")] travellers: Option<u8>,
        #[ai_description("The cabin class.")] cabin: Option<CabinClass>,
    ) -> String {
        format!(
            "search_flights {:?}",
            (destination, dates, travellers, cabin,)
        )
    }

    /// Searches hotels in a city for given dates.
    #[ai_function]
    fn search_hotels(
        &self,
        #[ai_description("A city or airport code.")] destination: String,
        #[ai_description("The travel dates.")] dates: DateRange,
        #[ai_description("Number of travellers.")] travellers: Option<u8>,
    ) -> String {
        format!("search_hotels {:?}", (destination, dates, travellers,))
    }

    /// Books a flight offer.
    #[ai_function]
    fn book_flight(
        &self,
        #[ai_description("A city or airport code.")] destination: String,
        #[ai_description("Number of travellers.")] travellers: u8,
    ) -> String {
        format!("book_flight {:?}", (destination, travellers,))
    }

    /// Books a hotel room.
    #[ai_function]
    fn book_hotel(
        &self,
        #[ai_description("A city or airport code.")] destination: String,
        #[ai_description("The travel dates.")] dates: DateRange,
    ) -> String {
        format!("book_hotel {:?}", (destination, dates,))
    }

    /// Returns a booking with its status.
    #[ai_function]
    fn get_booking(
        &self,
        #[ai_description("The identifier of the booking.")] booking_id: String,
    ) -> String {
        format!("get_booking {:?}", (booking_id,))
    }

    /// Cancels a booking and returns the refund.
    #[ai_function]
    fn cancel_booking(
        &self,
        #[ai_description("The identifier of the booking.")] booking_id: String,
    ) -> String {
        format!("cancel_booking {:?}", (booking_id,))
    }

    /// Checks in for a booked flight.
    #[ai_function]
    fn check_in(
        &self,
        #[ai_description("The identifier of the booking.")] booking_id: String,
    ) -> String {
        format!("check_in {:?}", (booking_id,))
    }

    /// Returns entry rules and advisories for a country.
    #[ai_function]
    fn travel_advisories(
        &self,
        #[ai_description("A city or airport code.")] destination: String,
    ) -> String {
        format!("travel_advisories {:?}", (destination,))
    }
}

/// The order status.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OrderStatus {
    /// Pending.
    Pending,
    /// Shipped.
    Shipped,
    /// Delivered.
    Delivered,
    /// Returned.
    Returned,
}

/// The delivery address.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct Address {
    /// Street and number.
    pub street: String,
    /// City.
    pub city: String,
    /// ISO country code.
    pub country: String,
}

/// Products, stock levels and orders.
#[derive(Debug, Default)]
pub struct InventoryTools;

#[collapse("Products, stock levels and orders")]
impl InventoryTools {
    /// Returns the stock of a product per warehouse.
    #[ai_function]
    fn stock_level(
        &self,
        #[ai_description("The stock-keeping unit.")] sku: String,
        #[ai_description("The warehouse code.")] warehouse: Option<String>,
    ) -> String {
        format!("stock_level {:?}", (sku, warehouse,))
    }

    /// Adds or removes units after a count.
    #[ai_function]
    fn adjust_stock(
        &self,
        #[ai_description("The stock-keeping unit.")] sku: String,
        #[ai_description("The warehouse code.")] warehouse: String,
        #[ai_description("A number of units.")] quantity: i64,
    ) -> String {
        format!("adjust_stock {:?}", (sku, warehouse, quantity,))
    }

    /// Moves units between warehouses.
    #[ai_function]
    fn transfer_stock(
        &self,
        #[ai_description("The stock-keeping unit.")] sku: String,
        #[ai_description("The warehouse code.")] warehouse: String,
        #[ai_description("A number of units.")] quantity: i64,
    ) -> String {
        format!("transfer_stock {:?}", (sku, warehouse, quantity,))
    }

    /// Creates an order for a product.
    #[ai_function]
    fn create_order(
        &self,
        #[ai_description("The stock-keeping unit.")] sku: String,
        #[ai_description("A number of units.")] quantity: i64,
        #[ai_description("The delivery address.")] ship_to: Address,
    ) -> String {
        format!("create_order {:?}", (sku, quantity, ship_to,))
    }

    /// Returns the status of an order.
    #[ai_function]
    fn order_status(&self, #[ai_description("The warehouse code.")] warehouse: String) -> String {
        format!("order_status {:?}", (warehouse,))
    }

    /// Lists orders with a status.
    #[ai_function]
    fn list_orders(
        &self,
        #[ai_description("The order status.")] status: OrderStatus,
        #[ai_description("A number of units.")] quantity: Option<i64>,
    ) -> String {
        format!("list_orders {:?}", (status, quantity,))
    }

    /// Lists products below their reorder point.
    #[ai_function]
    fn reorder_report(
        &self,
        #[ai_description("The warehouse code.")] warehouse: Option<String>,
    ) -> String {
        format!("reorder_report {:?}", (warehouse,))
    }

    /// Returns a product's description and price.
    #[ai_function]
    fn product_details(&self, #[ai_description("The stock-keeping unit.")] sku: String) -> String {
        format!("product_details {:?}", (sku,))
    }
}

/// The time bucket.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Granularity {
    /// Hour.
    Hour,
    /// Day.
    Day,
    /// Week.
    Week,
    /// Month.
    Month,
}

/// The reporting period.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct Period {
    /// YYYY-MM-DD.
    pub start_date: String,
    /// YYYY-MM-DD.
    pub end_date: String,
}

/// Web analytics reports.
#[derive(Debug, Default)]
pub struct AnalyticsTools;

#[collapse("Web analytics reports")]
impl AnalyticsTools {
    /// Returns a metric over a period.
    #[ai_function]
    fn run_report(
        &self,
        #[ai_description("The analytics property.")] property_id: String,
        #[ai_description("The metric name, such as sessions.")] metric: String,
        #[ai_description("The reporting period.")] period: Period,
        #[ai_description("The time bucket.")] granularity: Option<Granularity>,
    ) -> String {
        format!(
            "run_report {:?}",
            (property_id, metric, period, granularity,)
        )
    }

    /// Returns the most viewed pages.
    #[ai_function]
    fn top_pages(
        &self,
        #[ai_description("The analytics property.")] property_id: String,
        #[ai_description("The reporting period.")] period: Period,
        #[ai_description("How many rows to return.")] top_n: Option<u32>,
    ) -> String {
        format!("top_pages {:?}", (property_id, period, top_n,))
    }

    /// Breaks sessions down by source.
    #[ai_function]
    fn traffic_sources(
        &self,
        #[ai_description("The analytics property.")] property_id: String,
        #[ai_description("The reporting period.")] period: Period,
    ) -> String {
        format!("traffic_sources {:?}", (property_id, period,))
    }

    /// Returns the users active now.
    #[ai_function]
    fn realtime_users(
        &self,
        #[ai_description("The analytics property.")] property_id: String,
    ) -> String {
        format!("realtime_users {:?}", (property_id,))
    }

    /// Returns drop-off between funnel steps.
    #[ai_function]
    fn conversion_funnel(
        &self,
        #[ai_description("The analytics property.")] property_id: String,
        #[ai_description("The metric name, such as sessions.")] metric: String,
        #[ai_description("The reporting period.")] period: Period,
    ) -> String {
        format!("conversion_funnel {:?}", (property_id, metric, period,))
    }

    /// Compares a metric between two periods.
    #[ai_function]
    fn compare_periods(
        &self,
        #[ai_description("The analytics property.")] property_id: String,
        #[ai_description("The metric name, such as sessions.")] metric: String,
        #[ai_description("The reporting period.")] period: Period,
    ) -> String {
        format!("compare_periods {:?}", (property_id, metric, period,))
    }

    /// Lists conversion goals.
    #[ai_function]
    fn list_goals(
        &self,
        #[ai_description("The analytics property.")] property_id: String,
    ) -> String {
        format!("list_goals {:?}", (property_id,))
    }

    /// Exports a report as CSV.
    #[ai_function]
    fn export_report(
        &self,
        #[ai_description("The analytics property.")] property_id: String,
        #[ai_description("The metric name, such as sessions.")] metric: String,
        #[ai_description("The time bucket.")] granularity: Option<Granularity>,
    ) -> String {
        format!("export_report {:?}", (property_id, metric, granularity,))
    }
}

/// Registers one harness of the catalog on a builder, in catalog order.
pub const REGISTER: [fn(hpd_agent::AgentBuilder) -> hpd_agent::AgentBuilder; 20] = [
    |b| b.with_tool_harness::<CalendarTools>(),
    |b| b.with_tool_harness::<EmailTools>(),
    |b| b.with_tool_harness::<GitHubTools>(),
    |b| b.with_tool_harness::<StorageTools>(),
    |b| b.with_tool_harness::<SqlTools>(),
    |b| b.with_tool_harness::<WeatherService>(),
    |b| b.with_tool_harness::<MapsTools>(),
    |b| b.with_tool_harness::<PaymentsTools>(),
    |b| b.with_tool_harness::<CrmTools>(),
    |b| b.with_tool_harness::<DocsTools>(),
    |b| b.with_tool_harness::<SheetsTools>(),
    |b| b.with_tool_harness::<ChatTools>(),
    |b| b.with_tool_harness::<MonitoringTools>(),
    |b| b.with_tool_harness::<KubernetesTools>(),
    |b| b.with_tool_harness::<TicketTools>(),
    |b| b.with_tool_harness::<TranslationTools>(),
    |b| b.with_tool_harness::<ImageTools>(),
    |b| b.with_tool_harness::<TravelTools>(),
    |b| b.with_tool_harness::<InventoryTools>(),
    |b| b.with_tool_harness::<AnalyticsTools>(),
];

/// Registers every harness of the catalog on `builder`, in order.
pub fn register(builder: hpd_agent::AgentBuilder) -> hpd_agent::AgentBuilder {
    REGISTER.iter().fold(builder, |b, register| register(b))
}

/// The harness names, in registration order.
pub const HARNESSES: [&str; 20] = [
    "CalendarTools",
    "EmailTools",
    "GitHubTools",
    "StorageTools",
    "SqlTools",
    "WeatherService",
    "MapsTools",
    "PaymentsTools",
    "CrmTools",
    "DocsTools",
    "SheetsTools",
    "ChatTools",
    "MonitoringTools",
    "KubernetesTools",
    "TicketTools",
    "TranslationTools",
    "ImageTools",
    "TravelTools",
    "InventoryTools",
    "AnalyticsTools",
];
