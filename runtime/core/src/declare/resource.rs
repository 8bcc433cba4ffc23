//! What a `#[resource]` returns: text, bytes, or contents of its own making (an [`Embedded`] —
//! the URI is the one read, whatever it says).

use super::content::Embedded;
use crate::error::Error;

/// What a `#[resource]` may return.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a resource",
    note = "return `String` (text), `Vec<u8>` (bytes, sent base64-encoded) or `Embedded`"
)]
pub trait ResourceOutput {
    /// The contents at `uri`, of MIME type `mime_type` (the declared one) unless they say.
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Result<Embedded, Error>;
}

impl ResourceOutput for String {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Result<Embedded, Error> {
        Ok(Embedded::Text { uri: uri.to_owned(), mime_type: mime_type.map(str::to_owned), text: self })
    }
}

impl ResourceOutput for Vec<u8> {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Result<Embedded, Error> {
        let mime_type = mime_type.unwrap_or("application/octet-stream");
        Ok(Embedded::blob(uri, mime_type, self))
    }
}

impl ResourceOutput for Embedded {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Result<Embedded, Error> {
        Ok(match self {
            Embedded::Text { mime_type: given, text, .. } => {
                Embedded::Text { uri: uri.to_owned(), mime_type: given.or(mime_type.map(str::to_owned)), text }
            }
            Embedded::Blob { mime_type: given, blob, .. } => {
                Embedded::Blob { uri: uri.to_owned(), mime_type: given.or(mime_type.map(str::to_owned)), blob }
            }
        })
    }
}

/// The declared return type of a resource: `trails::Result<T>` with `T: ResourceOutput`.
#[diagnostic::on_unimplemented(
    message = "a resource must return `trails::Result<T>`, found `{Self}`",
    note = "change the return type to `trails::Result<T>` where `T` is `String`, `Vec<u8>` or `Embedded`"
)]
pub trait ResourceResult {
    /// The contents, or the function's error.
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Result<Embedded, Error>;
}

impl<T: ResourceOutput> ResourceResult for Result<T, Error> {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Result<Embedded, Error> {
        self?.into_contents(uri, mime_type)
    }
}
