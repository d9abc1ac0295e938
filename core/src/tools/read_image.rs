//! `read` of an image file: the image itself for a model that sees (prepared like a prompt
//! image, `crate::images`), else a plain statement of what the file is — never its bytes as
//! text.
//!
//! An image file is one by its magic number (a `.png` holding anything else is a binary file).
//! When `tools::Context::vision`, the result carries `Output.images` (→ `ToolResult.images`,
//! which the providers send) and `ToolContent::Image` for the client. The bytes come from
//! `Io::read_bytes`, always local: ACP's `fs/*` carry only text.

use std::path::Path;

use super::paths::shown;
use super::{Context, Output, ToolContent, ToolError};
use crate::chat::Image;
use crate::images::{self, Format, MAX_INPUT_BYTES, Prepared};

/// Enough of a file's start for every format's magic number.
const HEAD_BYTES: usize = 16;

/// Whether `path` is an image file, by its magic number: a `.png` that holds something else
/// is a binary file like any other (the text path refuses it as one), while a truncated or
/// corrupt image is reported as such. A file that cannot be read locally is left to the
/// text path, which says why.
pub async fn is_image(ctx: &Context, path: &Path) -> bool {
    let Ok(head) = ctx.io.read_bytes(path, HEAD_BYTES).await else {
        return false;
    };
    Format::sniff(&head).is_some()
}

pub async fn read(ctx: &Context, path: &Path) -> Result<Output, ToolError> {
    let name = shown(ctx, path);
    let bytes = ctx.io.read_bytes(path, MAX_INPUT_BYTES + 1).await?;
    // Decoding and resizing take a core for a moment: not on the async workers.
    let vision = ctx.vision;
    let done = tokio::task::spawn_blocking(move || {
        if vision {
            images::prepare(bytes, None).map(|image| seen(&name, image))
        } else {
            images::describe(&bytes).map(|(format, w, h)| unseen(&name, format, w, h))
        }
    })
    .await
    .map_err(|e| ToolError(format!("reading the image failed: {e}")))?;
    done.map_err(|why| ToolError(format!("{}: the image {why}", shown(ctx, path))))
}

/// The image for the model and the client, and a line saying what it is.
fn seen(name: &str, image: Prepared) -> Output {
    let size = match image.downscaled_from {
        Some((w, h)) => format!(
            "{w}×{h} px, downscaled to {}×{} for you",
            image.width, image.height
        ),
        None => format!("{}×{} px", image.width, image.height),
    };
    let (mime_type, data) = (image.format.mime_type().to_string(), image.base64());
    Output {
        for_model: format!("{name}: a {} image, {size}.", image.format.name()),
        content: vec![ToolContent::Image {
            mime_type: mime_type.clone(),
            data: data.clone(),
        }],
        images: vec![Image { mime_type, data }],
        ..Output::default()
    }
}

fn unseen(name: &str, format: Format, width: u32, height: u32) -> Output {
    Output {
        for_model: format!(
            "{name} is a {} image ({width}×{height} px). The current model cannot view \
             images, so its content cannot be shown; say so rather than guess what it shows.",
            format.name()
        ),
        ..Output::default()
    }
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use image::{DynamicImage, ImageFormat, RgbImage};
    use serde_json::json;

    use crate::images::decode_base64;
    use crate::tools::read::Read;
    use crate::tools::testing::{call, context};

    use super::*;

    fn png(width: u32, height: u32) -> Vec<u8> {
        let mut out = Cursor::new(Vec::new());
        DynamicImage::ImageRgb8(RgbImage::new(width, height))
            .write_to(&mut out, ImageFormat::Png)
            .unwrap();
        out.into_inner()
    }

    #[tokio::test]
    async fn a_model_that_sees_gets_the_image_and_what_it_is() {
        let dir = tempfile::tempdir().unwrap();
        // No extension: the magic number says what it is.
        std::fs::write(dir.path().join("shot"), png(1600, 400)).unwrap();
        let output = call(&Read, json!({ "path": "shot" }), &context(dir.path()))
            .await
            .unwrap();
        assert_eq!(
            output.for_model,
            "shot: a PNG image, 1600×400 px, downscaled to 1568×392 for you."
        );
        let image = &output.images[0];
        assert_eq!(image.mime_type, "image/png");
        let sent = image::load_from_memory(&decode_base64(&image.data).unwrap()).unwrap();
        assert_eq!((sent.width(), sent.height()), (1568, 392));
        assert_eq!(
            output.content,
            vec![ToolContent::Image {
                mime_type: image.mime_type.clone(),
                data: image.data.clone()
            }]
        );
    }

    #[tokio::test]
    async fn a_model_that_cannot_see_is_told_so() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.png"), png(30, 20)).unwrap();
        let mut ctx = context(dir.path());
        ctx.vision = false;
        let output = call(&Read, json!({ "path": "a.png" }), &ctx).await.unwrap();
        assert!(output.images.is_empty());
        assert!(
            output.for_model.starts_with(
                "a.png is a PNG image (30×20 px). The current model cannot view images"
            ),
            "{}",
            output.for_model
        );
    }

    #[tokio::test]
    async fn a_broken_image_file_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let cut = png(64, 64)[..40].to_vec();
        std::fs::write(dir.path().join("b.png"), cut).unwrap();
        let error = call(&Read, json!({ "path": "b.png" }), &context(dir.path()))
            .await
            .unwrap_err();
        assert!(
            error.0.starts_with("b.png: the image could not be decoded"),
            "{error}"
        );
    }
}
