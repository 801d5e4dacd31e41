//! TLS settings of the server stores: `sslmode` and `sslrootcert` in a store URL, read the same
//! way for PostgreSQL and Redis, and the rustls client configuration they stand for.
//!
//! | `sslmode` | TLS | the server's certificate |
//! |---|---|---|
//! | `disable` | no | - |
//! | `require` | yes | not checked (as libpq's `require`): encryption against eavesdropping only |
//! | `verify-full` | yes | signed by a trusted authority (`sslrootcert`, else the system's roots) and issued for the host name of the URL |

use std::path::{Path, PathBuf};

use super::StoreError;

#[cfg(feature = "postgres")]
pub(crate) use config::client_config;

/// How a store connection uses TLS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TlsMode {
    Disable,
    Require,
    VerifyFull,
}

/// The TLS settings of a store URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TlsSettings {
    pub(crate) mode: TlsMode,
    /// The authorities to trust (PEM), instead of the system's.
    pub(crate) ca_file: Option<PathBuf>,
}

/// Takes `sslmode` and `sslrootcert` out of a URL's query (`scheme://...?sslmode=...`) or a
/// `key=value` connection string, returning the rest and their values. `default` is the mode
/// when the URL names none.
pub(crate) fn take_settings(
    url: &str,
    default: TlsMode,
) -> Result<(String, TlsSettings), StoreError> {
    let mut mode = None;
    let mut ca_file = None;
    let mut take = |key: &str, value: &str| -> Result<bool, StoreError> {
        match key {
            "sslmode" => {
                mode = Some(match value {
                    "disable" => TlsMode::Disable,
                    "require" => TlsMode::Require,
                    "verify-full" => TlsMode::VerifyFull,
                    other => {
                        return Err(StoreError::Config(format!(
                            "sslmode '{other}' is not supported; use disable, require or verify-full"
                        )));
                    }
                });
                Ok(true)
            }
            "sslrootcert" => {
                ca_file = Some(PathBuf::from(percent_decode(value)));
                Ok(true)
            }
            _ => Ok(false),
        }
    };
    let rest = if url.contains("://") {
        let (base, fragment) = match url.split_once('#') {
            Some((base, fragment)) => (base, Some(fragment)),
            None => (url, None),
        };
        let mut rest = match base.split_once('?') {
            Some((path, query)) => {
                let mut kept = Vec::new();
                for pair in query.split('&').filter(|p| !p.is_empty()) {
                    let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
                    if !take(key, value)? {
                        kept.push(pair);
                    }
                }
                if kept.is_empty() {
                    path.to_owned()
                } else {
                    format!("{path}?{}", kept.join("&"))
                }
            }
            None => base.to_owned(),
        };
        if let Some(fragment) = fragment {
            rest.push('#');
            rest.push_str(fragment);
        }
        rest
    } else {
        let mut kept = Vec::new();
        for word in url.split_whitespace() {
            let (key, value) = word.split_once('=').unwrap_or((word, ""));
            if !take(key, value.trim_matches('\''))? {
                kept.push(word);
            }
        }
        kept.join(" ")
    };
    let settings = TlsSettings {
        mode: mode.unwrap_or(default),
        ca_file,
    };
    if settings.mode == TlsMode::Disable && settings.ca_file.is_some() {
        return Err(StoreError::Config(
            "sslrootcert is set but sslmode is disable: use sslmode=verify-full".to_owned(),
        ));
    }
    Ok((rest, settings))
}

/// `%XX` escapes of a URL query value decoded (a path may hold spaces or `&`).
fn percent_decode(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = value.get(i + 1..i + 3)
            && let Ok(byte) = u8::from_str_radix(hex, 16)
        {
            out.push(byte);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The PEM text of the CA file, read for a connection.
pub(crate) fn read_ca(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("the CA file '{}' cannot be read: {e}", path.display()))
}

/// The rustls configuration of the PostgreSQL store (the `redis` crate builds its own).
#[cfg(feature = "postgres")]
mod config {
    use std::path::Path;
    use std::sync::Arc;

    use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
    use rustls::crypto::CryptoProvider;
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
    use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};

    use super::{TlsMode, TlsSettings, read_ca};

    /// The crypto provider of every store connection (the one reqwest uses too).
    fn provider() -> Arc<CryptoProvider> {
        Arc::new(rustls::crypto::aws_lc_rs::default_provider())
    }

    /// The authorities a `verify-full` connection trusts: those of `ca_file`, else the system's.
    fn roots(ca_file: Option<&Path>) -> Result<RootCertStore, String> {
        let mut roots = RootCertStore::empty();
        match ca_file {
            Some(path) => {
                let pem = read_ca(path)?;
                let mut found = 0;
                for cert in CertificateDer::pem_slice_iter(&pem) {
                    let cert = cert.map_err(|e| {
                        format!(
                            "the CA file '{}' is not PEM certificates: {e}",
                            path.display()
                        )
                    })?;
                    roots.add(cert).map_err(|e| {
                        format!(
                            "the CA file '{}' holds an unusable certificate: {e}",
                            path.display()
                        )
                    })?;
                    found += 1;
                }
                if found == 0 {
                    return Err(format!(
                        "the CA file '{}' holds no certificate",
                        path.display()
                    ));
                }
            }
            None => {
                let native = rustls_native_certs_or_empty();
                if native.is_empty() {
                    return Err(
                        "no trusted authorities: the system has none; name a CA file with sslrootcert"
                            .to_owned(),
                    );
                }
                roots.add_parsable_certificates(native);
            }
        }
        Ok(roots)
    }

    fn rustls_native_certs_or_empty() -> Vec<CertificateDer<'static>> {
        rustls_native_certs::load_native_certs().certs
    }

    /// The rustls configuration of a connection with TLS (`None` for `disable`).
    pub(crate) fn client_config(settings: &TlsSettings) -> Result<Option<ClientConfig>, String> {
        let builder = ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS setup: {e}"))?;
        let config = match settings.mode {
            TlsMode::Disable => return Ok(None),
            TlsMode::Require => builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider())))
                .with_no_client_auth(),
            TlsMode::VerifyFull => builder
                .with_root_certificates(roots(settings.ca_file.as_deref())?)
                .with_no_client_auth(),
        };
        Ok(Some(config))
    }

    /// `sslmode=require`: any certificate is accepted (the handshake's signatures are still
    /// checked); the connection is encrypted but the server is not authenticated.
    #[derive(Debug)]
    struct AnyCertificate(Arc<CryptoProvider>);

    impl ServerCertVerifier for AnyCertificate {
        fn verify_server_cert(
            &self,
            _end_entity: &CertificateDer<'_>,
            _intermediates: &[CertificateDer<'_>],
            _server_name: &ServerName<'_>,
            _ocsp_response: &[u8],
            _now: UnixTime,
        ) -> Result<ServerCertVerified, rustls::Error> {
            Ok(ServerCertVerified::assertion())
        }

        fn verify_tls12_signature(
            &self,
            message: &[u8],
            cert: &CertificateDer<'_>,
            dss: &DigitallySignedStruct,
        ) -> Result<HandshakeSignatureValid, rustls::Error> {
            rustls::crypto::verify_tls12_signature(
                message,
                cert,
                dss,
                &self.0.signature_verification_algorithms,
            )
        }

        fn verify_tls13_signature(
            &self,
            message: &[u8],
            cert: &CertificateDer<'_>,
            dss: &DigitallySignedStruct,
        ) -> Result<HandshakeSignatureValid, rustls::Error> {
            rustls::crypto::verify_tls13_signature(
                message,
                cert,
                dss,
                &self.0.signature_verification_algorithms,
            )
        }

        fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
            self.0.signature_verification_algorithms.supported_schemes()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_are_taken_out_of_urls_and_connection_strings() {
        let (rest, settings) = take_settings(
            "postgres://u:p@h/db?application_name=x&sslmode=verify-full&sslrootcert=/c%20a.pem",
            TlsMode::Disable,
        )
        .unwrap();
        assert_eq!(rest, "postgres://u:p@h/db?application_name=x");
        assert_eq!(settings.mode, TlsMode::VerifyFull);
        assert_eq!(settings.ca_file.as_deref(), Some(Path::new("/c a.pem")));
        let (rest, settings) =
            take_settings("host=h sslmode=require user=u", TlsMode::Disable).unwrap();
        assert_eq!(
            (rest.as_str(), settings.mode),
            ("host=h user=u", TlsMode::Require)
        );
        let (rest, settings) = take_settings("rediss://h:1/0#x", TlsMode::VerifyFull).unwrap();
        assert_eq!(
            (rest.as_str(), settings.mode),
            ("rediss://h:1/0#x", TlsMode::VerifyFull)
        );
        let error = take_settings("postgres://h/db?sslmode=prefer", TlsMode::Disable).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("sslmode 'prefer' is not supported"),
            "{error}"
        );
        assert!(take_settings("postgres://h/db?sslrootcert=/x", TlsMode::Disable).is_err());
    }

    #[cfg(feature = "postgres")]
    #[test]
    fn a_missing_ca_file_is_named() {
        let settings = TlsSettings {
            mode: TlsMode::VerifyFull,
            ca_file: Some(PathBuf::from("/nonexistent/ca.pem")),
        };
        let error = client_config(&settings).unwrap_err();
        assert!(
            error.contains("'/nonexistent/ca.pem' cannot be read"),
            "{error}"
        );
    }
}
