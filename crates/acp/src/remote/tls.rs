//! TLS for the remote transports, with rustls (and its aws-lc-rs provider).
//!
//! Clients trust the system's root certificates plus any given
//! ([`ClientOptions::root_certificate`](crate::remote::ClientOptions::root_certificate));
//! servers load a certificate chain and a private key from PEM files.

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::io;
use std::path::Path;
use std::sync::Arc;

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::aws_lc_rs::default_provider())
}

fn tls_error(what: &str, e: impl std::fmt::Display) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, format!("{what}: {e}"))
}

/// The certificates of a PEM file (a chain, or roots to trust).
pub fn load_certificates(path: &Path) -> io::Result<Vec<CertificateDer<'static>>> {
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| {
            tls_error(
                &format!("cannot read certificates from {}", path.display()),
                e,
            )
        })?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| tls_error(&format!("bad certificate in {}", path.display()), e))?;
    if certs.is_empty() {
        return Err(tls_error(
            &format!("{}", path.display()),
            "no PEM certificate in the file",
        ));
    }
    Ok(certs)
}

/// The first private key of a PEM file (PKCS#8, PKCS#1 or SEC1).
pub fn load_private_key(path: &Path) -> io::Result<PrivateKeyDer<'static>> {
    PrivateKeyDer::from_pem_file(path).map_err(|e| {
        tls_error(
            &format!("cannot read a private key from {}", path.display()),
            e,
        )
    })
}

/// A server configuration for `chain` and `key`, offering HTTP/2 and
/// HTTP/1.1 by ALPN.
pub fn server_config(
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
) -> io::Result<rustls::ServerConfig> {
    let mut config = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| tls_error("TLS setup", e))?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| tls_error("the TLS certificate and key do not fit", e))?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}

/// A client configuration trusting the system's roots and `extra`; with
/// `alpn`, offering HTTP/1.1 by ALPN (hyper-rustls sets ALPN itself).
#[cfg_attr(not(any(feature = "websocket", feature = "http")), allow(dead_code))]
pub(crate) fn client_config(
    extra: &[CertificateDer<'static>],
    alpn: bool,
) -> io::Result<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    // Unreadable system certificates are skipped: a root given explicitly
    // may be all that is needed.
    for cert in rustls_native_certs::load_native_certs().certs {
        let _ = roots.add(cert);
    }
    for cert in extra {
        roots
            .add(cert.clone())
            .map_err(|e| tls_error("bad root certificate", e))?;
    }
    let mut config = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| tls_error("TLS setup", e))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    if alpn {
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
    }
    Ok(config)
}
