//! TLS towards a remote endpoint: rustls with the aws-lc-rs provider (reqwest's default, so any
//! other reqwest client in the same binary keeps working; it builds with a C compiler alone), the
//! operating system's trust roots, plus the CA certificates a deployment names (`[kg] ca_file`,
//! for a private CA). Given to reqwest pre-built, so nothing process-wide is installed.

use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;

use crate::store::StoreError;

/// The client TLS configuration: system roots and every certificate in `extra_roots_pem`.
pub(crate) fn client_config(extra_roots_pem: Option<&[u8]>) -> Result<rustls::ClientConfig, StoreError> {
    let tls = |what: &str, error: &dyn std::fmt::Display| StoreError::Remote(format!("TLS: {what}: {error}"));
    let mut extra = Vec::new();
    if let Some(pem) = extra_roots_pem {
        for certificate in CertificateDer::pem_slice_iter(pem) {
            extra.push(certificate.map_err(|e| tls("reading the CA certificates", &e))?);
        }
        if extra.is_empty() {
            return Err(StoreError::Remote("TLS: the CA file holds no PEM certificate".into()));
        }
    }
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let verifier = rustls_platform_verifier::Verifier::new_with_extra_roots(extra, provider.clone())
        .map_err(|e| tls("loading the trust roots", &e))?;
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| tls("protocol versions", &e))?
        .dangerous() // not dangerous: the platform verifier does full WebPKI verification
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth())
}

/// For a store on `http://` URLs only: a configuration that trusts no certificate (reqwest wants
/// one all the same; an `https://` redirect then fails instead of going unverified).
pub(crate) fn trusting_nothing() -> rustls::ClientConfig {
    rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::aws_lc_rs::default_provider()))
        .with_safe_default_protocol_versions()
        .expect("aws-lc-rs supports the default protocol versions")
        .with_root_certificates(rustls::RootCertStore::empty())
        .with_no_client_auth()
}
