#!/usr/bin/env python3
"""Writes the synthetic tool catalog of the context-economy benchmark.

    python3 bench/gen_catalog.py > hpd-agent-tests/benches/catalog/synthetic.rs

20 collapsed harnesses x 8 functions, written with hpd-agent's attribute macros. Every function
has a one-sentence description, four harnesses have a system prompt, and the parameters mix strings, numbers, an enum, optional
values and a nested struct, each with a description.
"""

# Each domain: harness, container description, the parameter kinds it uses, 8 functions.
# Parameter kinds: id (string), text (string), num (number), enum, struct; a trailing `?` makes
# the parameter optional.
DOMAINS = [
    dict(h="CalendarTools", sp="Times are in the user's time zone unless they name another; confirm before deleting events.",
         d="Calendar events, availability and reminders",
         id=("event_id", "The identifier of the calendar event."),
         text=("title", "A short human-readable title."),
         num=("duration_minutes", "u32", "Length of the event in minutes."),
         enum=("Visibility", "visibility", ["Public", "Private", "Confidential"], "Who can see the event details."),
         struct=("TimeRange", "window", [("start", "String", "Start as an RFC 3339 timestamp."), ("end", "String", "End as an RFC 3339 timestamp.")], "The time window to consider."),
         fns=[("list_events", "Lists the events of the user's primary calendar within a time window.", "struct,num?"),
              ("create_event", "Creates a calendar event and returns its identifier.", "text,struct,enum?"),
              ("update_event", "Changes the title, time or visibility of an existing event.", "id,text?,struct?,enum?"),
              ("delete_event", "Deletes an event and notifies its attendees.", "id,text?"),
              ("find_free_slot", "Finds the first free slot of the given length for all listed attendees.", "num,struct,text?"),
              ("invite_attendee", "Adds an attendee by email address and sends the invitation.", "id,text"),
              ("set_reminder", "Sets a reminder a number of minutes before an event starts.", "id,num"),
              ("export_calendar", "Exports the events of a time window as an iCalendar file.", "struct,enum?")]),
    dict(h="EmailTools", sp="Never send a message without showing the user the final text first.",
         d="Read, search, send and organise email",
         id=("message_id", "The identifier of the message."),
         text=("query", "A search query in the mail provider's syntax."),
         num=("max_results", "u32", "The largest number of messages to return."),
         enum=("Folder", "folder", ["Inbox", "Sent", "Archive", "Trash"], "The mailbox folder."),
         struct=("Recipients", "recipients", [("to", "Vec<String>", "Primary recipients."), ("cc", "Vec<String>", "Carbon-copy recipients.")], "Who receives the message."),
         fns=[("search_messages", "Searches messages and returns their identifiers, senders and subjects.", "text,num?,enum?"),
              ("read_message", "Returns the full body and headers of one message.", "id"),
              ("send_message", "Sends a new plain-text message.", "struct,text"),
              ("reply_message", "Replies to a message, quoting the original below the reply.", "id,text"),
              ("forward_message", "Forwards a message with its attachments to new recipients.", "id,struct"),
              ("move_message", "Moves a message to another folder.", "id,enum"),
              ("label_message", "Adds a label to a message, creating the label if needed.", "id,text"),
              ("delete_message", "Moves a message to the trash, or deletes it for good when asked.", "id,enum?")]),
    dict(h="GitHubTools", sp="Quote issue and pull request numbers with a leading #.",
         d="Repositories, issues and pull requests on GitHub",
         id=("repository", "The repository as owner/name."),
         text=("body", "Markdown text."),
         num=("number", "u64", "The issue or pull request number."),
         enum=("IssueState", "state", ["Open", "Closed", "All"], "Which issues to include."),
         struct=("Labels", "labels", [("names", "Vec<String>", "Label names."), ("replace", "bool", "Replace the existing labels instead of adding.")], "Labels to apply."),
         fns=[("list_issues", "Lists the issues of a repository, newest first.", "id,enum?,struct?"),
              ("create_issue", "Opens a new issue with a title and a body.", "id,text,struct?"),
              ("comment_issue", "Adds a comment to an issue or pull request.", "id,num,text"),
              ("close_issue", "Closes an issue, optionally with a final comment.", "id,num,text?"),
              ("list_pull_requests", "Lists the pull requests of a repository.", "id,enum?"),
              ("review_pull_request", "Submits a review with a verdict and a summary comment.", "id,num,text"),
              ("merge_pull_request", "Merges a pull request when its checks have passed.", "id,num"),
              ("search_code", "Searches code across repositories and returns matching paths.", "text,id?")]),
    dict(h="StorageTools", d="Files and folders in cloud storage",
         id=("path", "The path of the file or folder, from the storage root."),
         text=("content", "The text content."),
         num=("size_limit_kb", "u64", "Ignore files larger than this many kilobytes."),
         enum=("SortOrder", "sort", ["Name", "Modified", "Size"], "How to order the entries."),
         struct=("Sharing", "sharing", [("email", "String", "Who to share with."), ("can_edit", "bool", "Whether they may change the file.")], "The sharing settings."),
         fns=[("list_folder", "Lists the entries of a folder.", "id,enum?"),
              ("read_text_file", "Returns the content of a text file.", "id"),
              ("write_text_file", "Creates or replaces a text file.", "id,text"),
              ("move_entry", "Moves or renames a file or folder.", "id,text"),
              ("delete_entry", "Deletes a file or an empty folder.", "id"),
              ("share_entry", "Shares a file or folder with another user.", "id,struct"),
              ("search_files", "Finds files whose name or content matches a query.", "text,num?,enum?"),
              ("get_metadata", "Returns size, owner and modification time of an entry.", "id")]),
    dict(h="SqlTools", sp="Prefer read-only queries; run statements that change data only when the user asks.",
         d="Query and administer the SQL database",
         id=("table", "The table name, optionally schema-qualified."),
         text=("sql", "One SQL statement."),
         num=("row_limit", "u32", "The largest number of rows to return."),
         enum=("IsolationLevel", "isolation", ["ReadCommitted", "RepeatableRead", "Serializable"], "The transaction isolation level."),
         struct=("Connection", "connection", [("database", "String", "The database name."), ("read_only", "bool", "Open the session read-only.")], "Which database to use and how."),
         fns=[("run_query", "Runs a read-only query and returns the rows as JSON.", "text,num?,struct?"),
              ("run_statement", "Runs a statement that changes data and returns the affected row count.", "text,enum?"),
              ("describe_table", "Returns the columns, types and indexes of a table.", "id"),
              ("list_tables", "Lists the tables of a database.", "struct?"),
              ("explain_query", "Returns the query plan of a statement without running it.", "text"),
              ("table_size", "Returns the row count and disk size of a table.", "id"),
              ("create_index", "Creates an index on the given columns of a table.", "id,text"),
              ("vacuum_table", "Reclaims space and refreshes statistics of a table.", "id,enum?")]),
    dict(h="WeatherService", d="Current weather, forecasts and alerts",
         id=("location", "A city name or a latitude,longitude pair."),
         text=("language", "The language of textual descriptions, as an IETF tag."),
         num=("days", "u8", "How many days ahead, 1 to 14."),
         enum=("Units", "units", ["Metric", "Imperial", "Standard"], "The unit system of the values."),
         struct=("Coordinates", "coordinates", [("latitude", "f64", "Degrees north."), ("longitude", "f64", "Degrees east.")], "A point on Earth."),
         fns=[("current_weather", "Returns temperature, wind, humidity and conditions now.", "id,enum?"),
              ("daily_forecast", "Returns the daily forecast for the coming days.", "id,num,enum?"),
              ("hourly_forecast", "Returns the hourly forecast for the next 48 hours.", "struct,enum?"),
              ("weather_alerts", "Lists active severe-weather alerts for a location.", "id,text?"),
              ("air_quality", "Returns the air quality index and pollutant levels.", "struct"),
              ("historical_weather", "Returns the observed weather for a past date.", "id,text"),
              ("sunrise_sunset", "Returns sunrise and sunset times for a date.", "struct,text?"),
              ("uv_index", "Returns the UV index forecast for the coming days.", "id,num?")]),
    dict(h="MapsTools", d="Geocoding, places and routes",
         id=("place_id", "The identifier of a place."),
         text=("address", "A postal address or place name."),
         num=("radius_m", "u32", "Search radius in metres."),
         enum=("TravelMode", "mode", ["Driving", "Walking", "Cycling", "Transit"], "How to travel."),
         struct=("LatLng", "origin", [("lat", "f64", "Latitude in degrees."), ("lng", "f64", "Longitude in degrees.")], "The starting point."),
         fns=[("geocode", "Turns an address into coordinates.", "text"),
              ("reverse_geocode", "Turns coordinates into the nearest address.", "struct"),
              ("search_places", "Finds places matching a query near a point.", "text,struct,num?"),
              ("place_details", "Returns opening hours, rating and contact details of a place.", "id"),
              ("directions", "Returns a route with turn-by-turn steps.", "struct,text,enum?"),
              ("travel_time", "Estimates travel time between two points.", "struct,text,enum"),
              ("nearby_transit", "Lists public transport stops near a point.", "struct,num?"),
              ("static_map_url", "Returns the URL of a map image centred on a place.", "id,num?")]),
    dict(h="PaymentsTools", d="Charges, refunds, customers and invoices",
         id=("customer_id", "The identifier of the customer."),
         text=("description", "A description shown on the statement."),
         num=("amount", "f64", "The amount in the currency's major unit."),
         enum=("Currency", "currency", ["Usd", "Eur", "Gbp", "Jpy"], "The ISO currency."),
         struct=("Card", "card", [("token", "String", "A tokenised card."), ("save", "bool", "Keep the card for later charges.")], "The payment method."),
         fns=[("create_charge", "Charges a customer's card.", "id,num,enum,struct?"),
              ("refund_charge", "Refunds a charge fully or partly.", "text,num?"),
              ("get_customer", "Returns a customer's profile and saved payment methods.", "id"),
              ("create_customer", "Creates a customer record.", "text,struct?"),
              ("list_invoices", "Lists a customer's invoices, newest first.", "id,num?"),
              ("send_invoice", "Emails an invoice to its customer.", "text"),
              ("create_subscription", "Starts a recurring subscription for a customer.", "id,text,enum"),
              ("balance", "Returns the account balance by currency.", "enum?")]),
    dict(h="CrmTools", d="Contacts, companies and deals in the CRM",
         id=("contact_id", "The identifier of the contact."),
         text=("note", "Free text."),
         num=("deal_value", "f64", "The expected value of the deal."),
         enum=("DealStage", "stage", ["Lead", "Qualified", "Proposal", "Won", "Lost"], "The pipeline stage."),
         struct=("ContactInfo", "info", [("name", "String", "Full name."), ("email", "String", "Email address."), ("phone", "Option<String>", "Phone number.")], "The contact's details."),
         fns=[("find_contact", "Finds contacts by name, email or company.", "note,num?"),
              ("create_contact", "Creates a contact.", "struct"),
              ("update_contact", "Changes a contact's details.", "id,struct"),
              ("log_activity", "Logs a call, meeting or email with a contact.", "id,note"),
              ("create_deal", "Opens a deal for a contact.", "id,num,enum?"),
              ("move_deal", "Moves a deal to another pipeline stage.", "id,enum"),
              ("list_deals", "Lists open deals, largest first.", "enum?,num?"),
              ("merge_contacts", "Merges a duplicate contact into another.", "id,note")]),
    dict(h="DocsTools", d="Create and edit shared documents",
         id=("document_id", "The identifier of the document."),
         text=("text", "Markdown text."),
         num=("revision", "u64", "A revision number."),
         enum=("ExportFormat", "format", ["Pdf", "Docx", "Markdown", "Html"], "The file format."),
         struct=("Position", "at", [("paragraph", "u32", "Paragraph index, from 0."), ("offset", "u32", "Character offset in the paragraph.")], "Where in the document."),
         fns=[("create_document", "Creates a document with a title and initial text.", "text,text?"),
              ("read_document", "Returns the text of a document.", "id,num?"),
              ("insert_text", "Inserts text at a position.", "id,struct,text"),
              ("replace_text", "Replaces every occurrence of a phrase.", "id,text"),
              ("add_comment", "Adds a comment anchored at a position.", "id,struct,text"),
              ("list_revisions", "Lists the revisions of a document.", "id"),
              ("export_document", "Exports a document to another format.", "id,enum"),
              ("share_document", "Shares a document with a user.", "id,text")]),
    dict(h="SheetsTools", d="Read and write spreadsheets",
         id=("spreadsheet_id", "The identifier of the spreadsheet."),
         text=("range", "A cell range in A1 notation."),
         num=("sheet_index", "u32", "The sheet's index, from 0."),
         enum=("ValueInput", "input", ["Raw", "UserEntered"], "How written values are interpreted."),
         struct=("CellFormat", "format", [("bold", "bool", "Bold text."), ("number_format", "Option<String>", "A number format pattern.")], "The cell format."),
         fns=[("read_range", "Returns the values of a range.", "id,text"),
              ("write_range", "Writes values into a range.", "id,text,enum?"),
              ("append_rows", "Appends rows after the last row with data.", "id,text"),
              ("clear_range", "Clears the values of a range.", "id,text"),
              ("add_sheet", "Adds a sheet.", "id,text"),
              ("format_range", "Applies a format to a range.", "id,text,struct"),
              ("sort_range", "Sorts a range by a column.", "id,text,num"),
              ("list_sheets", "Lists the sheets of a spreadsheet.", "id")]),
    dict(h="ChatTools", d="Team chat channels and messages",
         id=("channel", "The channel name or identifier."),
         text=("text", "Message text, with markdown."),
         num=("limit", "u32", "How many messages to return."),
         enum=("Presence", "presence", ["Active", "Away", "DoNotDisturb"], "A presence status."),
         struct=("Thread", "thread", [("parent_ts", "String", "Timestamp of the parent message."), ("broadcast", "bool", "Also post to the channel.")], "A thread to reply in."),
         fns=[("post_message", "Posts a message to a channel.", "id,text,struct?"),
              ("channel_history", "Returns the latest messages of a channel.", "id,num?"),
              ("search_chat", "Searches messages across channels.", "text,num?"),
              ("create_channel", "Creates a channel.", "id,text?"),
              ("invite_to_channel", "Invites users to a channel.", "id,text"),
              ("add_reaction", "Adds an emoji reaction to a message.", "id,text"),
              ("set_presence", "Sets the user's presence.", "enum"),
              ("pin_message", "Pins a message in a channel.", "id,text")]),
    dict(h="MonitoringTools", d="Metrics, logs and alerts of production services",
         id=("service", "The service name."),
         text=("query", "A query in the metrics language."),
         num=("minutes", "u32", "How far back to look, in minutes."),
         enum=("Severity", "severity", ["Info", "Warning", "Critical"], "The alert severity."),
         struct=("Threshold", "threshold", [("value", "f64", "The threshold value."), ("for_minutes", "u32", "How long it must hold.")], "When the alert fires."),
         fns=[("query_metrics", "Evaluates a metrics query over a time span.", "text,num?"),
              ("search_logs", "Searches the logs of a service.", "id,text,num?"),
              ("list_alerts", "Lists firing alerts.", "enum?"),
              ("create_alert", "Creates an alert rule on a metric.", "id,text,struct,enum"),
              ("silence_alert", "Silences an alert for some minutes.", "id,num"),
              ("service_health", "Returns error rate, latency and saturation of a service.", "id"),
              ("list_dashboards", "Lists the dashboards of a service.", "id?"),
              ("incident_timeline", "Returns the events of an incident.", "text")]),
    dict(h="KubernetesTools", d="Workloads and resources of the Kubernetes cluster",
         id=("name", "The resource name."),
         text=("namespace", "The namespace."),
         num=("replicas", "u32", "The desired replica count."),
         enum=("ResourceKind", "kind", ["Pod", "Deployment", "Service", "ConfigMap"], "The resource kind."),
         struct=("Selector", "selector", [("key", "String", "Label key."), ("value", "String", "Label value.")], "A label selector."),
         fns=[("list_resources", "Lists resources of a kind in a namespace.", "enum,text?,struct?"),
              ("describe_resource", "Returns the status and events of a resource.", "enum,id,text?"),
              ("pod_logs", "Returns the latest log lines of a pod.", "id,text?,num?"),
              ("scale_deployment", "Changes the replica count of a deployment.", "id,num,text?"),
              ("restart_deployment", "Restarts the pods of a deployment.", "id,text?"),
              ("apply_manifest", "Applies a YAML manifest.", "text"),
              ("delete_resource", "Deletes a resource.", "enum,id,text?"),
              ("rollout_status", "Returns the rollout status of a deployment.", "id,text?")]),
    dict(h="TicketTools", d="Support tickets and help-desk queues",
         id=("ticket_id", "The identifier of the ticket."),
         text=("comment", "A comment for the requester or agents."),
         num=("page", "u32", "The result page, from 1."),
         enum=("Priority", "priority", ["Low", "Normal", "High", "Urgent"], "The ticket priority."),
         struct=("Requester", "requester", [("email", "String", "The requester's email."), ("name", "Option<String>", "Their name.")], "Who asked."),
         fns=[("search_tickets", "Searches tickets by text, status or assignee.", "comment,num?"),
              ("get_ticket", "Returns a ticket with its conversation.", "id"),
              ("create_ticket", "Opens a ticket.", "comment,struct,enum?"),
              ("reply_ticket", "Replies to the requester.", "id,comment"),
              ("add_internal_note", "Adds a note only agents see.", "id,comment"),
              ("set_priority", "Changes a ticket's priority.", "id,enum"),
              ("assign_ticket", "Assigns a ticket to an agent or group.", "id,comment"),
              ("close_ticket", "Solves and closes a ticket.", "id,comment?")]),
    dict(h="TranslationTools", d="Translate and detect languages",
         id=("target_language", "The target language as an IETF tag."),
         text=("text", "The text to work on."),
         num=("max_alternatives", "u8", "How many alternative translations to return."),
         enum=("Formality", "formality", ["Default", "More", "Less"], "The register of the translation."),
         struct=("Glossary", "glossary", [("terms", "Vec<String>", "Source terms."), ("translations", "Vec<String>", "Their fixed translations.")], "Fixed term translations."),
         fns=[("translate", "Translates text into a target language.", "text,id,enum?,struct?"),
              ("detect_language", "Detects the language of a text.", "text"),
              ("list_languages", "Lists supported languages.", "id?"),
              ("transliterate", "Converts text into another script.", "text,id"),
              ("translate_document", "Translates a document given as a URL.", "text,id"),
              ("alternatives", "Returns alternative translations of a phrase.", "text,id,num"),
              ("create_glossary", "Stores a glossary for later translations.", "id,struct"),
              ("usage", "Returns characters translated this month.", "")]),
    dict(h="ImageTools", d="Generate, edit and analyse images",
         id=("image_url", "The URL of the image."),
         text=("prompt", "A description of the desired image."),
         num=("width", "u32", "Width in pixels."),
         enum=("ImageFormat", "format", ["Png", "Jpeg", "Webp"], "The output format."),
         struct=("Crop", "crop", [("x", "u32", "Left edge."), ("y", "u32", "Top edge."), ("size", "u32", "Side length.")], "A square crop."),
         fns=[("generate_image", "Generates an image from a prompt.", "text,num?,enum?"),
              ("edit_image", "Edits an image following a prompt.", "id,text"),
              ("describe_image", "Returns a caption and the objects seen.", "id"),
              ("crop_image", "Crops an image.", "id,struct"),
              ("resize_image", "Resizes an image keeping its aspect ratio.", "id,num"),
              ("convert_image", "Converts an image to another format.", "id,enum"),
              ("extract_text", "Reads the text in an image.", "id,text?"),
              ("remove_background", "Makes the background transparent.", "id")]),
    dict(h="TravelTools", d="Flights, hotels and bookings",
         id=("booking_id", "The identifier of the booking."),
         text=("destination", "A city or airport code."),
         num=("travellers", "u8", "Number of travellers."),
         enum=("CabinClass", "cabin", ["Economy", "PremiumEconomy", "Business", "First"], "The cabin class."),
         struct=("DateRange", "dates", [("from", "String", "First day, YYYY-MM-DD."), ("to", "String", "Last day, YYYY-MM-DD.")], "The travel dates."),
         fns=[("search_flights", "Searches flights to a destination on given dates.", "text,struct,num?,enum?"),
              ("search_hotels", "Searches hotels in a city for given dates.", "text,struct,num?"),
              ("book_flight", "Books a flight offer.", "text,num"),
              ("book_hotel", "Books a hotel room.", "text,struct"),
              ("get_booking", "Returns a booking with its status.", "id"),
              ("cancel_booking", "Cancels a booking and returns the refund.", "id"),
              ("check_in", "Checks in for a booked flight.", "id"),
              ("travel_advisories", "Returns entry rules and advisories for a country.", "text")]),
    dict(h="InventoryTools", d="Products, stock levels and orders",
         id=("sku", "The stock-keeping unit."),
         text=("warehouse", "The warehouse code."),
         num=("quantity", "i64", "A number of units."),
         enum=("OrderStatus", "status", ["Pending", "Shipped", "Delivered", "Returned"], "The order status."),
         struct=("Address", "ship_to", [("street", "String", "Street and number."), ("city", "String", "City."), ("country", "String", "ISO country code.")], "The delivery address."),
         fns=[("stock_level", "Returns the stock of a product per warehouse.", "id,text?"),
              ("adjust_stock", "Adds or removes units after a count.", "id,text,num"),
              ("transfer_stock", "Moves units between warehouses.", "id,text,num"),
              ("create_order", "Creates an order for a product.", "id,num,struct"),
              ("order_status", "Returns the status of an order.", "text"),
              ("list_orders", "Lists orders with a status.", "enum,num?"),
              ("reorder_report", "Lists products below their reorder point.", "text?"),
              ("product_details", "Returns a product's description and price.", "id")]),
    dict(h="AnalyticsTools", d="Web analytics reports",
         id=("property_id", "The analytics property."),
         text=("metric", "The metric name, such as sessions."),
         num=("top_n", "u32", "How many rows to return."),
         enum=("Granularity", "granularity", ["Hour", "Day", "Week", "Month"], "The time bucket."),
         struct=("Period", "period", [("start_date", "String", "YYYY-MM-DD."), ("end_date", "String", "YYYY-MM-DD.")], "The reporting period."),
         fns=[("run_report", "Returns a metric over a period.", "id,text,struct,enum?"),
              ("top_pages", "Returns the most viewed pages.", "id,struct,num?"),
              ("traffic_sources", "Breaks sessions down by source.", "id,struct"),
              ("realtime_users", "Returns the users active now.", "id"),
              ("conversion_funnel", "Returns drop-off between funnel steps.", "id,text,struct"),
              ("compare_periods", "Compares a metric between two periods.", "id,text,struct"),
              ("list_goals", "Lists conversion goals.", "id"),
              ("export_report", "Exports a report as CSV.", "id,text,enum?")]),
]

assert len(DOMAINS) == 20 and all(len(d["fns"]) == 8 for d in DOMAINS)

def camel(s):
    return "".join(p.capitalize() for p in s.split("_"))

out = []
w = out.append
w("//! The synthetic catalog of the context-economy benchmark, written by `bench/gen_catalog.py`")
w("//! (do not edit by hand): 20 collapsed harnesses of 8 functions each.")
w("")
w("#![allow(missing_docs)]")
w("")
w("use hpd_agent::prelude::*;")
w("use serde::Deserialize;")
w("")
names = []
for dom in DOMAINS:
    enum_name, enum_field, variants, enum_desc = dom["enum"]
    w(f"/// {enum_desc}")
    w("#[derive(Debug, Deserialize, schemars::JsonSchema)]")
    w("#[serde(rename_all = \"snake_case\")]")
    w(f"pub enum {enum_name} {{")
    for v in variants:
        w(f"    /// {v}.")
        w(f"    {v},")
    w("}")
    w("")
    sname, sfield, sfields, sdesc = dom["struct"]
    w(f"/// {sdesc}")
    w("#[derive(Debug, Deserialize, schemars::JsonSchema)]")
    w(f"pub struct {sname} {{")
    for fname, ftype, fdesc in sfields:
        w(f"    /// {fdesc}")
        w(f"    pub {fname}: {ftype},")
    w("}")
    w("")
    h = dom["h"]
    names.append(h)
    w(f"/// {dom['d']}.")
    w("#[derive(Debug, Default)]")
    w(f"pub struct {h};")
    w("")
    if "sp" in dom:
        w(f"#[collapse(\"{dom['d']}\", system_prompt = \"{dom['sp']}\")]")
    else:
        w(f"#[collapse(\"{dom['d']}\")]")
    w(f"impl {h} {{")
    for fn, desc, spec in dom["fns"]:
        params = []
        seen = set()
        for tok in [t for t in spec.split(",") if t]:
            opt = tok.endswith("?")
            kind = tok.rstrip("?")
            if kind in ("id", "text", "note", "comment"):
                key = "id" if kind == "id" else "text"
                pname, pdesc = dom[key]
                ptype = "String"
            elif kind == "num":
                pname, ptype, pdesc = dom["num"]
            elif kind == "enum":
                pname, ptype, pdesc = enum_field, enum_name, enum_desc
            elif kind == "struct":
                pname, ptype, pdesc = sfield, sname, sdesc
            else:
                raise SystemExit(f"unknown kind {kind}")
            if pname in seen:
                pname = "subject" if ptype == "String" else pname + "_2"
            seen.add(pname)
            if opt:
                ptype = f"Option<{ptype}>"
            params.append((pname, ptype, pdesc))
        w(f"    /// {desc}")
        w("    #[ai_function]")
        w(f"    fn {fn}(")
        w("        &self,")
        for pname, ptype, pdesc in params:
            w(f"        #[ai_description(\"{pdesc}\")] {pname}: {ptype},")
        w("    ) -> String {")
        args = ", ".join(p[0] for p in params)
        if params:
            w(f"        format!(\"{fn} {{:?}}\", ({args},))")
        else:
            w(f"        \"{fn}\".to_owned()")
        w("    }")
        w("")
    out[-1:] = []
    w("}")
    w("")
w("/// Registers one harness of the catalog on a builder, in catalog order.")
w(f"pub const REGISTER: [fn(hpd_agent::AgentBuilder) -> hpd_agent::AgentBuilder; {len(names)}] = [")
for h in names:
    w(f"    |b| b.with_tool_harness::<{h}>(),")
w("];")
w("")
w("/// Registers every harness of the catalog on `builder`, in order.")
w("pub fn register(builder: hpd_agent::AgentBuilder) -> hpd_agent::AgentBuilder {")
w("    REGISTER.iter().fold(builder, |b, register| register(b))")
w("}")
w("")
w(f"/// The harness names, in registration order.")
w(f"pub const HARNESSES: [&str; {len(names)}] = [")
for h in names:
    w(f"    \"{h}\",")
w("];")
print("\n".join(out))
