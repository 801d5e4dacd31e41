//! The pieces of `McpHarness`'s OAuth sign-in that are the application's: token stores (the
//! file one with permissions 0600), the loopback redirect, and secrets kept out of `Debug`.
//! The sign-in itself runs against the official conformance suite's authorization servers
//! (`.ci/mcp-conformance.sh`).

use hpd_agent::mcp::{
    AuthorizationHandler, FileTokenStore, LoopbackRedirect, McpHarness, McpOAuth, MemoryTokenStore,
    StoredTokens, TokenStore,
};
use serde_json::json;

const SECRET: &str = "hpd-oauth-secret-5Rt2";

fn tokens() -> StoredTokens {
    serde_json::from_value(json!({
        "client_id": "app",
        "token_response": {
            "access_token": SECRET,
            "token_type": "bearer",
            "refresh_token": format!("refresh-{SECRET}"),
            "expires_in": 3600
        },
        "granted_scopes": ["tools"],
        "token_received_at": 1_700_000_000u64
    }))
    .unwrap()
}

#[tokio::test]
async fn the_file_store_keeps_tokens_for_its_owner_only() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested").join("tokens.json");
    let store = FileTokenStore::new(&path);
    assert!(store.load().await.unwrap().is_none());
    store.save(tokens()).await.unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{mode:o}");
    }
    let loaded = store.load().await.unwrap().unwrap();
    assert_eq!(loaded.client_id(), "app");
    assert_eq!(loaded.scopes(), ["tools"]);
    assert!(loaded.has_access_token());
    // A second process reads what the first wrote.
    let again = FileTokenStore::new(&path).load().await.unwrap().unwrap();
    assert_eq!(
        serde_json::to_value(&again).unwrap(),
        serde_json::to_value(&loaded).unwrap()
    );
    store.clear().await.unwrap();
    assert!(store.load().await.unwrap().is_none());
    store.clear().await.unwrap(); // clearing twice is fine

    std::fs::write(&path, "not json").unwrap();
    let error = store.load().await.unwrap_err().to_string();
    assert!(error.contains("is not a token file"), "{error}");
}

#[tokio::test]
async fn the_memory_store_round_trips() {
    let store = MemoryTokenStore::new();
    store.save(tokens()).await.unwrap();
    assert_eq!(store.load().await.unwrap().unwrap().client_id(), "app");
    store.clear().await.unwrap();
    assert!(store.load().await.unwrap().is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_token_or_client_secret_shows_in_debug() {
    let redirect = LoopbackRedirect::bind(0).await.unwrap();
    let oauth = McpOAuth::new(redirect)
        .with_client_id("backend")
        .with_client_secret(SECRET)
        .with_scopes(["tools"]);
    let harness = McpHarness::http("Remote", "http://127.0.0.1:9/mcp").with_oauth(oauth.clone());
    let store = MemoryTokenStore::new();
    store.save(tokens()).await.unwrap();
    for text in [
        format!("{oauth:?}"),
        format!("{oauth:#?}"),
        format!("{harness:?}"),
        format!("{:?}", tokens()),
        format!("{store:?}"),
    ] {
        assert!(!text.contains(SECRET), "{text}");
    }
    assert!(format!("{oauth:?}").contains("pre-registered backend"));
    // A failed connection's error does not quote the secret either.
    let error = harness.connect().await.unwrap_err();
    assert!(!error.to_string().contains(SECRET));
    assert!(!format!("{error:?}").contains(SECRET));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_loopback_redirect_answers_other_requests_404_and_returns_the_callback() {
    let redirect = LoopbackRedirect::bind(0)
        .await
        .unwrap()
        .on_authorization_url(|_| {});
    let uri = redirect.redirect_uri();
    let base = uri.trim_end_matches("/callback").to_owned();
    let browser = tokio::spawn(async move {
        let favicon = reqwest::get(format!("{base}/favicon.ico")).await.unwrap();
        let callback = reqwest::get(format!("{base}/callback?code=c0de&state=s7ate"))
            .await
            .unwrap();
        (favicon.status().as_u16(), callback.status().as_u16())
    });
    let callback = redirect
        .authorize("https://as.example/authorize")
        .await
        .unwrap();
    assert_eq!(callback, format!("{uri}?code=c0de&state=s7ate"));
    assert_eq!(browser.await.unwrap(), (404, 200));
}
