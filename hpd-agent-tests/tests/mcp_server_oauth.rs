//! `McpServer::oauth`: the protected-resource metadata, `WWW-Authenticate` answers that name
//! it, and access tokens checked by `StaticTokenVerifier` and `JwtVerifier` (keys from a JWKS
//! served on loopback; tokens signed here with Ed25519).

use std::time::{SystemTime, UNIX_EPOCH};

use aws_lc_rs::signature::{Ed25519KeyPair, KeyPair as _};
use base64::Engine as _;
use hpd_agent::mcp::{
    JwtVerifier, McpHarness, McpHttpServer, McpServer, ProtectedResource, StaticTokenVerifier,
    TokenVerifier,
};
use hpd_agent::{AgentBuilder, HarnessBuilder, ScriptedChatClient, Tool, ToolResult};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const ISSUER: &str = "https://auth.example.test";

async fn serve(resource: ProtectedResource) -> McpHttpServer {
    let hello = Tool::new(
        "hello",
        "Says hello",
        json!({"type": "object"}),
        |_, _| async { ToolResult::ok("hello") },
    );
    let agent = AgentBuilder::new()
        .with_harness(
            HarnessBuilder::new("Greeter")
                .with_tool(hello)
                .build()
                .unwrap(),
        )
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap();
    McpServer::new(agent)
        .with_oauth(resource)
        .serve_http("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap()
}

/// An `initialize` POST with `token`: the status and the `WWW-Authenticate` header.
async fn post(server: &McpHttpServer, token: Option<&str>) -> (u16, Option<String>) {
    let mut request = reqwest::Client::new()
        .post(server.url())
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"}}})
            .to_string(),
        );
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    let challenge = response
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_owned());
    (response.status().as_u16(), challenge)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_and_challenges_name_the_resource() {
    let server = serve(
        ProtectedResource::new(
            ISSUER,
            StaticTokenVerifier::new("scoped-token").with_scopes(["tools"]),
        )
        .with_required_scopes(["tools"])
        .with_scopes_supported(["offline_access"]),
    )
    .await;
    let metadata_url = format!(
        "http://{}/.well-known/oauth-protected-resource/mcp",
        server.local_addr()
    );
    for url in [
        metadata_url.clone(),
        format!(
            "http://{}/.well-known/oauth-protected-resource",
            server.local_addr()
        ),
    ] {
        let metadata: Value = reqwest::get(&url).await.unwrap().json().await.unwrap();
        assert_eq!(
            metadata,
            json!({
                "resource": server.url(),
                "authorization_servers": [ISSUER],
                "bearer_methods_supported": ["header"],
                "scopes_supported": ["tools", "offline_access"],
            }),
            "{url}"
        );
    }

    let (status, challenge) = post(&server, None).await;
    assert_eq!(status, 401);
    assert_eq!(
        challenge.unwrap(),
        format!(r#"Bearer resource_metadata="{metadata_url}", scope="tools""#)
    );
    let (status, challenge) = post(&server, Some("wrong-token")).await;
    assert_eq!(status, 401);
    assert!(challenge.unwrap().ends_with(r#"error="invalid_token""#));
    assert_eq!(post(&server, Some("scoped-token")).await.0, 200);

    // The project's client with the token lists the tools.
    let remote = McpHarness::http("Remote", server.url())
        .with_header("Authorization", "Bearer scoped-token")
        .connect()
        .await
        .unwrap();
    assert_eq!(remote.tool_names(), ["hello"]);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_metadata_answers_get_and_head_only_and_checks_the_origin() {
    let server = serve(ProtectedResource::new(
        ISSUER,
        StaticTokenVerifier::new("t0ken"),
    ))
    .await;
    let url = format!(
        "http://{}/.well-known/oauth-protected-resource/mcp",
        server.local_addr()
    );
    let client = reqwest::Client::new();
    let got = client.get(&url).send().await.unwrap();
    assert_eq!(got.status(), 200);
    assert_eq!(got.headers()["content-type"], "application/json");
    let length = got.headers()["content-length"].clone();

    // HEAD: the headers of GET, no body; and it needs no token either.
    let head = client.head(&url).send().await.unwrap();
    assert_eq!(head.status(), 200);
    assert_eq!(head.headers()["content-type"], "application/json");
    assert_eq!(head.headers()["content-length"], length);
    assert!(head.bytes().await.unwrap().is_empty());

    for method in [reqwest::Method::POST, reqwest::Method::DELETE] {
        let refused = client.request(method.clone(), &url).send().await.unwrap();
        assert_eq!(refused.status(), 405, "{method}");
        let allow = refused.headers()["allow"].to_str().unwrap().to_owned();
        let mut allowed: Vec<&str> = allow.split(',').map(str::trim).collect();
        allowed.sort_unstable();
        assert_eq!(allowed, ["GET", "HEAD"], "{method}");
    }

    // A foreign page is turned away before the document: 403, not the metadata.
    let foreign = client
        .get(&url)
        .header("Origin", "http://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(foreign.status(), 403);
    let loopback = client
        .get(&url)
        .header("Origin", "http://localhost:3000")
        .send()
        .await
        .unwrap();
    assert_eq!(loopback.status(), 200);
    // Other well-known paths are not the document: they go to the transport, behind the token.
    let other = format!(
        "http://{}/.well-known/oauth-protected-resource/other",
        server.local_addr()
    );
    assert_eq!(client.get(&other).send().await.unwrap().status(), 401);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_without_a_required_scope_gets_403() {
    let server = serve(
        ProtectedResource::new(
            ISSUER,
            StaticTokenVerifier::new("narrow-token").with_scopes(["read"]),
        )
        .with_required_scopes(["read", "tools"]),
    )
    .await;
    let (status, challenge) = post(&server, Some("narrow-token")).await;
    assert_eq!(status, 403);
    let challenge = challenge.unwrap();
    assert!(challenge.contains(r#"scope="read tools""#), "{challenge}");
    assert!(
        challenge.ends_with(r#"error="insufficient_scope""#),
        "{challenge}"
    );
    server.shutdown().await;
}

/// An Ed25519 signing key and its JWKS.
struct Signer {
    key: jsonwebtoken::EncodingKey,
    jwks: Value,
}

impl Signer {
    fn new(kid: &str) -> Self {
        let rng = aws_lc_rs::rand::SystemRandom::new();
        let pkcs8 = Ed25519KeyPair::generate_pkcs8(&rng).unwrap();
        let pair = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap();
        let x = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(pair.public_key().as_ref());
        Signer {
            key: jsonwebtoken::EncodingKey::from_ed_der(pkcs8.as_ref()),
            jwks: json!({"keys": [{"kty": "OKP", "crv": "Ed25519", "x": x, "kid": kid, "alg": "EdDSA", "use": "sig"}]}),
        }
    }

    fn token(&self, kid: &str, claims: Value) -> String {
        let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::EdDSA);
        header.kid = Some(kid.to_owned());
        jsonwebtoken::encode(&header, &claims, &self.key).unwrap()
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jwt_access_tokens_are_checked_for_issuer_audience_expiry_and_scope() {
    let signer = Signer::new("k1");
    let jwks = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/jwks"))
        .respond_with(ResponseTemplate::new(200).set_body_json(&signer.jwks))
        .mount(&jwks)
        .await;
    let verifier = JwtVerifier::new(ISSUER, format!("{}/jwks", jwks.uri()));
    let server =
        serve(ProtectedResource::new(ISSUER, verifier).with_required_scopes(["tools"])).await;
    let resource = server.url();
    let claims = |aud: &str, exp: u64, scope: &str, iss: &str| json!({"iss": iss, "aud": aud, "exp": exp, "sub": "alice", "scope": scope, "client_id": "app"});
    let good = signer.token("k1", claims(&resource, now() + 600, "tools other", ISSUER));
    assert_eq!(post(&server, Some(&good)).await.0, 200);

    let refused = [
        (
            "wrong audience",
            claims("http://elsewhere/mcp", now() + 600, "tools", ISSUER),
        ),
        ("expired", claims(&resource, now() - 600, "tools", ISSUER)),
        (
            "wrong issuer",
            claims(&resource, now() + 600, "tools", "https://evil.test"),
        ),
    ];
    for (what, claims) in refused {
        let (status, challenge) = post(&server, Some(&signer.token("k1", claims))).await;
        assert_eq!(status, 401, "{what}");
        assert!(
            challenge.unwrap().contains(r#"error="invalid_token""#),
            "{what}"
        );
    }
    // Signed with a key the JWKS does not have.
    let stranger = Signer::new("k1").token("k1", claims(&resource, now() + 600, "tools", ISSUER));
    assert_eq!(post(&server, Some(&stranger)).await.0, 401);
    // Valid, but without the required scope.
    let narrow = signer.token("k1", claims(&resource, now() + 600, "other", ISSUER));
    let (status, challenge) = post(&server, Some(&narrow)).await;
    assert_eq!(status, 403);
    assert!(challenge.unwrap().contains(r#"error="insufficient_scope""#));
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_jwt_verifier_reads_what_the_token_grants() {
    let signer = Signer::new("k2");
    let jwks = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/jwks"))
        .respond_with(ResponseTemplate::new(200).set_body_json(&signer.jwks))
        .mount(&jwks)
        .await;
    let verifier = JwtVerifier::new(ISSUER, format!("{}/jwks", jwks.uri()))
        .with_audience("https://tools.example.test/mcp");
    let exp = now() + 60;
    let token = signer.token(
        "k2",
        json!({"iss": ISSUER, "aud": ["https://tools.example.test/mcp"], "exp": exp,
               "sub": "bob", "scp": ["a", "b"], "client_id": "cli"}),
    );
    // The configured audience wins over the resource URL the server passes.
    let verified = verifier
        .verify(&token, "http://127.0.0.1:1/mcp")
        .await
        .unwrap();
    assert_eq!(verified.subject(), Some("bob"));
    assert_eq!(verified.client_id(), Some("cli"));
    assert_eq!(verified.scopes(), ["a", "b"]);
    assert_eq!(
        verified.expires_at(),
        Some(UNIX_EPOCH + std::time::Duration::from_secs(exp))
    );
    // A refusal never quotes the token.
    let expired = signer.token(
        "k2",
        json!({"iss": ISSUER, "aud": "https://tools.example.test/mcp", "exp": now() - 600}),
    );
    let refused = verifier.verify(&expired, "").await.unwrap_err();
    assert_eq!(refused.reason(), "the token has expired");
    assert!(!format!("{refused:?}").contains(&expired));
}
