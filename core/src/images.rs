//! Images for the model: from bytes a client or a file gave us to an image every provider
//! takes — one of four formats, decodable, and small enough to be worth its tokens.
//!
//! A leaf: the prompt handler (`acp/`) and the `read` tool (`tools/`) both prepare images
//! here, and neither may import the other.
//!
//! The bounds: input over [`MAX_INPUT_BYTES`] is refused before it is decoded; an image whose
//! long edge is over [`MAX_EDGE`] is downscaled to it. Anthropic bills an image at about
//! w×h/750 tokens and refuses sides over 2000 px in many-image requests; 1568 px is the long
//! edge it recommends, and OpenAI's high-detail tiling gains nothing past it either.
//!
//! [`prepare`]: the format is sniffed from the bytes (a declared `mimeType` must agree); the
//! whole image is decoded, so a corrupt one is refused here, not by the provider (decoding may
//! allocate at most 256 MiB); one over the edge is downscaled (Lanczos3, aspect kept) and
//! re-encoded — PNG as PNG, JPEG as JPEG (quality 85), GIF and WebP as PNG. One within bounds
//! is sent byte for byte.

use std::io::Cursor;

use base64::Engine as _;
use image::codecs::jpeg::JpegEncoder;
use image::codecs::png::PngEncoder;
use image::imageops::FilterType;
use image::{DynamicImage, ImageFormat, ImageReader};

/// The most bytes (after base64 decoding) an image may have before it is prepared.
pub const MAX_INPUT_BYTES: usize = 20 * 1024 * 1024;
/// The longest edge, in pixels, of an image sent to a model.
pub const MAX_EDGE: u32 = 1568;
/// Decoding refuses images larger than this in memory: 20 MiB of a compressed format can
/// claim a canvas of gigabytes.
const MAX_DECODED_BYTES: u64 = 256 * 1024 * 1024;
/// Quality of a downscaled JPEG: visually clean at about a tenth of the raw size.
const JPEG_QUALITY: u8 = 85;

/// The formats every provider reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Png,
    Jpeg,
    Gif,
    Webp,
}

/// The accepted MIME types, for messages.
pub const ACCEPTED_MIME_TYPES: &str = "image/png, image/jpeg, image/gif or image/webp";

impl Format {
    /// The format a MIME type names (`image/jpg` too, which clients send).
    pub fn from_mime(mime: &str) -> Option<Format> {
        match mime.trim().to_ascii_lowercase().as_str() {
            "image/png" => Some(Format::Png),
            "image/jpeg" | "image/jpg" => Some(Format::Jpeg),
            "image/gif" => Some(Format::Gif),
            "image/webp" => Some(Format::Webp),
            _ => None,
        }
    }

    /// The format the bytes are in, by their magic number.
    pub fn sniff(bytes: &[u8]) -> Option<Format> {
        match image::guess_format(bytes).ok()? {
            ImageFormat::Png => Some(Format::Png),
            ImageFormat::Jpeg => Some(Format::Jpeg),
            ImageFormat::Gif => Some(Format::Gif),
            ImageFormat::WebP => Some(Format::Webp),
            _ => None,
        }
    }

    pub fn mime_type(self) -> &'static str {
        match self {
            Format::Png => "image/png",
            Format::Jpeg => "image/jpeg",
            Format::Gif => "image/gif",
            Format::Webp => "image/webp",
        }
    }

    /// The name people know it by.
    pub fn name(self) -> &'static str {
        match self {
            Format::Png => "PNG",
            Format::Jpeg => "JPEG",
            Format::Gif => "GIF",
            Format::Webp => "WebP",
        }
    }

    fn codec(self) -> ImageFormat {
        match self {
            Format::Png => ImageFormat::Png,
            Format::Jpeg => ImageFormat::Jpeg,
            Format::Gif => ImageFormat::Gif,
            Format::Webp => ImageFormat::WebP,
        }
    }
}

/// Why an image cannot be sent: a phrase that reads after "the image" ("is 25.0 MiB; …",
/// "could not be decoded: …"), so each caller names the image its own way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageError(pub String);

impl std::fmt::Display for ImageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Callers put the phrase into messages of their own.
impl From<ImageError> for String {
    fn from(error: ImageError) -> String {
        error.0
    }
}

/// An image ready for a model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prepared {
    pub format: Format,
    /// The encoded image: the input itself when it needed no downscaling.
    pub bytes: Vec<u8>,
    pub width: u32,
    pub height: u32,
    /// The input's size, when it was downscaled.
    pub downscaled_from: Option<(u32, u32)>,
}

impl Prepared {
    /// The image as providers and ACP carry it: standard base64, padded.
    pub fn base64(&self) -> String {
        base64::engine::general_purpose::STANDARD.encode(&self.bytes)
    }
}

/// Base64 as clients send it (padded or not), refused unread when it would decode to more
/// than [`MAX_INPUT_BYTES`].
pub fn decode_base64(text: &str) -> Result<Vec<u8>, ImageError> {
    check_size(text.len() / 4 * 3)?;
    let engine = base64::engine::GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        base64::engine::GeneralPurposeConfig::new()
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
    );
    engine
        .decode(text.trim())
        .map_err(|e| ImageError(format!("could not be decoded: the data is not base64: {e}")))
}

/// Refuses an input of `len` bytes over the bound.
pub fn check_size(len: usize) -> Result<(), ImageError> {
    if len > MAX_INPUT_BYTES {
        return Err(ImageError(format!(
            "is {:.1} MiB; images of up to {} MiB are accepted",
            len as f64 / (1024.0 * 1024.0),
            MAX_INPUT_BYTES / (1024 * 1024)
        )));
    }
    Ok(())
}

/// Checks and decodes `bytes` (in `declared` format when the sender named one) and downscales
/// the image to [`MAX_EDGE`]. CPU-bound: call it off the async workers.
pub fn prepare(bytes: Vec<u8>, declared: Option<Format>) -> Result<Prepared, ImageError> {
    check_size(bytes.len())?;
    let format = detect(&bytes, declared)?;
    let image = decode(&bytes, format)?;
    let (width, height) = (image.width(), image.height());
    if width.max(height) <= MAX_EDGE {
        // Small enough as it came: sent untouched, with no loss of quality.
        return Ok(Prepared {
            format,
            bytes,
            width,
            height,
            downscaled_from: None,
        });
    }
    let smaller = image.resize(MAX_EDGE, MAX_EDGE, FilterType::Lanczos3);
    let (format, bytes) = encode(&smaller, format)?;
    Ok(Prepared {
        format,
        bytes,
        width: smaller.width(),
        height: smaller.height(),
        downscaled_from: Some((width, height)),
    })
}

/// The format and size of an image file without decoding its pixels: what a model that
/// cannot see is told about it.
pub fn describe(bytes: &[u8]) -> Result<(Format, u32, u32), ImageError> {
    let format = detect(bytes, None)?;
    let (width, height) = reader(bytes, format)
        .into_dimensions()
        .map_err(|e| ImageError(format!("could not be read: {e}")))?;
    Ok((format, width, height))
}

/// The bytes' own format, which must be the one declared.
fn detect(bytes: &[u8], declared: Option<Format>) -> Result<Format, ImageError> {
    let Some(found) = Format::sniff(bytes) else {
        return Err(ImageError(format!(
            "could not be decoded: the data is not a PNG, JPEG, GIF or WebP image{}",
            declared.map_or(String::new(), |d| format!(
                " (it was sent as {})",
                d.mime_type()
            ))
        )));
    };
    match declared {
        Some(declared) if declared != found => Err(ImageError(format!(
            "could not be decoded: the data is a {} image, not {} as its mimeType says",
            found.name(),
            declared.mime_type()
        ))),
        _ => Ok(found),
    }
}

fn reader(bytes: &[u8], format: Format) -> ImageReader<Cursor<&[u8]>> {
    let mut limits = image::Limits::default();
    limits.max_alloc = Some(MAX_DECODED_BYTES);
    let mut reader = ImageReader::with_format(Cursor::new(bytes), format.codec());
    reader.limits(limits);
    reader
}

/// Decodes the whole image: a corrupt one is refused here rather than by the provider.
fn decode(bytes: &[u8], format: Format) -> Result<DynamicImage, ImageError> {
    reader(bytes, format)
        .decode()
        .map_err(|e| ImageError(format!("could not be decoded: {e}")))
}

/// A downscaled image in its own format where that is PNG or JPEG; GIF and WebP become PNG
/// (the `image` crate writes WebP only losslessly and GIF only as a palette, and PNG is
/// lossless and smaller than both for that).
fn encode(image: &DynamicImage, format: Format) -> Result<(Format, Vec<u8>), ImageError> {
    let mut out = Vec::new();
    let written = match format {
        Format::Jpeg => {
            image.write_with_encoder(JpegEncoder::new_with_quality(&mut out, JPEG_QUALITY))
        }
        Format::Png | Format::Gif | Format::Webp => {
            image.write_with_encoder(PngEncoder::new(&mut out))
        }
    };
    written.map_err(|e| ImageError(format!("could not be re-encoded: {e}")))?;
    let format = if format == Format::Jpeg {
        Format::Jpeg
    } else {
        Format::Png
    };
    Ok((format, out))
}

#[cfg(test)]
mod tests {
    use image::{Rgb, RgbImage, Rgba, RgbaImage};

    use super::*;

    fn encoded(image: DynamicImage, format: ImageFormat) -> Vec<u8> {
        let mut out = Cursor::new(Vec::new());
        image.write_to(&mut out, format).unwrap();
        out.into_inner()
    }

    fn gradient(width: u32, height: u32) -> DynamicImage {
        DynamicImage::ImageRgb8(RgbImage::from_fn(width, height, |x, y| {
            Rgb([(x % 256) as u8, (y % 256) as u8, 128])
        }))
    }

    #[test]
    fn a_small_image_goes_through_untouched() {
        let png = encoded(gradient(40, 30), ImageFormat::Png);
        let prepared = prepare(png.clone(), Some(Format::Png)).unwrap();
        assert_eq!(
            (prepared.format, prepared.width, prepared.height),
            (Format::Png, 40, 30)
        );
        assert_eq!(prepared.bytes, png);
        assert_eq!(prepared.downscaled_from, None);
        assert_eq!(decode_base64(&prepared.base64()).unwrap(), png);
    }

    #[test]
    fn a_large_image_is_downscaled_in_its_own_format_keeping_its_shape() {
        let jpeg = encoded(gradient(1000, 2000), ImageFormat::Jpeg);
        let prepared = prepare(jpeg, None).unwrap();
        assert_eq!(prepared.format, Format::Jpeg);
        assert_eq!((prepared.width, prepared.height), (784, 1568));
        assert_eq!(prepared.downscaled_from, Some((1000, 2000)));
        let back = image::load_from_memory_with_format(&prepared.bytes, ImageFormat::Jpeg).unwrap();
        assert_eq!((back.width(), back.height()), (784, 1568));
    }

    #[test]
    fn a_large_gif_becomes_a_png_with_its_transparency() {
        let clear = DynamicImage::ImageRgba8(RgbaImage::from_pixel(1600, 10, Rgba([9, 9, 9, 0])));
        let prepared = prepare(encoded(clear, ImageFormat::Gif), Some(Format::Gif)).unwrap();
        assert_eq!(prepared.format, Format::Png);
        assert_eq!((prepared.width, prepared.height), (1568, 10));
        let back = image::load_from_memory_with_format(&prepared.bytes, ImageFormat::Png).unwrap();
        assert_eq!(back.to_rgba8().get_pixel(0, 0)[3], 0);
    }

    #[test]
    fn what_cannot_be_sent_is_refused_with_why() {
        let png = encoded(gradient(4, 4), ImageFormat::Png);
        let error = prepare(png.clone(), Some(Format::Jpeg)).unwrap_err();
        assert_eq!(
            error.0,
            "could not be decoded: the data is a PNG image, not image/jpeg as its mimeType says"
        );
        let error = prepare(b"hello".to_vec(), Some(Format::Png)).unwrap_err();
        assert!(
            error.0.contains("not a PNG, JPEG, GIF or WebP image"),
            "{error}"
        );
        // A PNG whose pixel data is cut off is caught by decoding, not left to the provider.
        let cut = png[..png.len() - 20].to_vec();
        assert!(prepare(cut, Some(Format::Png)).is_err());
        let error = decode_base64(&"A".repeat(MAX_INPUT_BYTES / 3 * 4 + 8)).unwrap_err();
        assert!(error.0.contains("up to 20 MiB"), "{error}");
        assert!(decode_base64("not base64!").is_err());
    }

    #[test]
    fn a_file_is_described_without_decoding_it() {
        let webp = encoded(gradient(7, 5), ImageFormat::WebP);
        assert_eq!(describe(&webp).unwrap(), (Format::Webp, 7, 5));
        assert_eq!(Format::from_mime("image/JPG"), Some(Format::Jpeg));
        assert_eq!(Format::from_mime("image/svg+xml"), None);
    }
}
