//! Images end to end, on both providers: prompt images in their wire shape, downscaled when
//! large, refused (-32602, nothing logged) when corrupt or when the model takes none, replayed
//! after a restart and kept in the model's context; `file://` uris; `read` of an image file.

mod common;

use std::io::Cursor;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use common::{Setup, call, text};
use hearth_testkit::{AcpClient, InProcess, absolute, file_uri};
use image::{DynamicImage, ImageFormat, Rgb, RgbImage};
use serde_json::{Value, json};

#[derive(Clone, Copy, Debug)]
enum Provider {
    OpenAi,
    Anthropic,
}

const BOTH: [Provider; 2] = [Provider::OpenAi, Provider::Anthropic];

/// A session's engine config on `provider`, with `vision` for its model.
fn config(setup: &Setup, provider: Provider, vision: bool) -> Value {
    let mut config: Value = serde_json::from_str(&setup.config()).unwrap();
    let model = match provider {
        Provider::OpenAi => "mock-model",
        Provider::Anthropic => {
            config["providers"]["anthropic"] = json!({"baseUrl": setup.mock.base_url(),
                "apiKey": "anthropic-test-key", "maxRetries": 0});
            "claude-test"
        }
    };
    config["model"] = json!(model);
    config["models"] = json!([{"id": model, "vision": vision}]);
    config
}

/// A mock scripted with `script`, an engine on `provider` and a session in the mock's dir.
fn start(provider: Provider, vision: bool, script: Value) -> (Setup, AcpClient<InProcess>, String) {
    let setup = Setup::new(script);
    let mut client = engine(&config(&setup, provider, vision));
    let session = client.new_session(&setup.cwd());
    (setup, client, session)
}

fn engine(config: &Value) -> AcpClient<InProcess> {
    let mut client = AcpClient::new(InProcess::start(&config.to_string()));
    client.initialize();
    client
}

fn encoded(width: u32, height: u32, format: ImageFormat) -> Vec<u8> {
    let image = DynamicImage::ImageRgb8(RgbImage::from_fn(width, height, |x, y| {
        Rgb([(x % 251) as u8, (y % 251) as u8, 90])
    }));
    let mut out = Cursor::new(Vec::new());
    image.write_to(&mut out, format).unwrap();
    out.into_inner()
}

fn png(width: u32, height: u32) -> Vec<u8> {
    encoded(width, height, ImageFormat::Png)
}

fn image_block(bytes: &[u8], mime_type: &str) -> Value {
    json!({"type": "image", "data": STANDARD.encode(bytes), "mimeType": mime_type})
}

fn prompt(client: &mut AcpClient<InProcess>, session: &str, blocks: Value) -> Value {
    client.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": blocks}),
    )
}

/// Sends a prompt that must be refused as invalid params; returns the error's message.
fn refused(client: &mut AcpClient<InProcess>, session: &str, blocks: Value) -> String {
    let response = prompt(client, session, blocks);
    assert_eq!(response["error"]["code"], -32602, "{response:.300}");
    response["error"]["message"].as_str().unwrap().to_string()
}

/// Every image in a model request body, in order, as `(mime type, bytes)`, read from the
/// provider's own wire shape.
fn sent_images(provider: Provider, body: &Value) -> Vec<(String, Vec<u8>)> {
    let mut found = Vec::new();
    for message in body["messages"].as_array().unwrap() {
        let Some(parts) = message["content"].as_array() else {
            continue;
        };
        for part in parts {
            match provider {
                Provider::OpenAi => images_in_openai(part, &mut found),
                Provider::Anthropic => images_in_anthropic(part, &mut found),
            }
        }
    }
    found
}

fn images_in_openai(part: &Value, found: &mut Vec<(String, Vec<u8>)>) {
    if part["type"] != "image_url" {
        return;
    }
    let url = part["image_url"]["url"].as_str().unwrap();
    let (mime, data) = url
        .strip_prefix("data:")
        .and_then(|rest| rest.split_once(";base64,"))
        .unwrap_or_else(|| panic!("not a base64 data URL: {url:.60}"));
    found.push((mime.to_string(), STANDARD.decode(data).unwrap()));
}

fn images_in_anthropic(part: &Value, found: &mut Vec<(String, Vec<u8>)>) {
    match part["type"].as_str() {
        Some("image") => {
            assert_eq!(part["source"]["type"], "base64", "{part:.200}");
            let mime = part["source"]["media_type"].as_str().unwrap().to_string();
            let data = STANDARD.decode(part["source"]["data"].as_str().unwrap());
            found.push((mime, data.unwrap()));
        }
        // Tool results carry their images inside.
        Some("tool_result") => {
            for inner in part["content"].as_array().into_iter().flatten() {
                images_in_anthropic(inner, found);
            }
        }
        _ => {}
    }
}

fn dimensions(bytes: &[u8]) -> (u32, u32) {
    let image = image::load_from_memory(bytes).unwrap();
    (image.width(), image.height())
}

/// The images of a session's replayed `user_message_chunk`s, as `(mime type, bytes, uri)`.
fn replayed_images(client: &AcpClient<InProcess>, session: &str) -> Vec<(String, Vec<u8>, Value)> {
    client
        .updates(session)
        .into_iter()
        .filter(|u| u["sessionUpdate"] == "user_message_chunk" && u["content"]["type"] == "image")
        .map(|u| {
            let content = &u["content"];
            (
                content["mimeType"].as_str().unwrap().to_string(),
                STANDARD.decode(content["data"].as_str().unwrap()).unwrap(),
                content["uri"].clone(),
            )
        })
        .collect()
}

fn load(client: &mut AcpClient<InProcess>, session: &str, cwd: &str) {
    client.call(
        "session/load",
        json!({"sessionId": session, "cwd": cwd, "mcpServers": []}),
    );
}

#[test]
fn a_small_image_reaches_the_model_as_sent() {
    for provider in BOTH {
        let (setup, mut client, session) = start(
            provider,
            true,
            json!({"responses": [text(&["a red square"])]}),
        );
        let bytes = png(24, 16);
        let blocks =
            json!([{"type": "text", "text": "what is this?"}, image_block(&bytes, "image/png")]);
        let response = prompt(&mut client, &session, blocks);
        assert_eq!(response["result"]["stopReason"], "end_turn", "{provider:?}");

        let body = &setup.mock.requests()[0].body;
        assert_eq!(
            sent_images(provider, body),
            vec![("image/png".to_string(), bytes)],
            "{provider:?}: an image within bounds goes untouched"
        );
        // The text and the image are one user message, in the order they came.
        let user = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["role"] == "user")
            .unwrap();
        let kinds: Vec<&str> = user["content"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["type"].as_str().unwrap())
            .collect();
        let image_kind = match provider {
            Provider::OpenAi => "image_url",
            Provider::Anthropic => "image",
        };
        assert_eq!(kinds, ["text", image_kind], "{provider:?}");
    }
}

#[test]
fn a_large_image_arrives_downscaled_to_a_1568_px_long_edge() {
    for provider in BOTH {
        let (setup, mut client, session) = start(
            provider,
            true,
            json!({"responses": [text(&["wide"]), text(&["tall"])]}),
        );
        let wide = image_block(&png(3000, 1000), "image/png");
        prompt(&mut client, &session, json!([wide]));
        let tall = image_block(&encoded(900, 2400, ImageFormat::Jpeg), "image/jpeg");
        prompt(&mut client, &session, json!([tall]));

        let requests = setup.mock.requests();
        let first = sent_images(provider, &requests[0].body);
        assert_eq!(first.len(), 1);
        assert_eq!(first[0].0, "image/png", "{provider:?}: png stays png");
        assert_eq!(dimensions(&first[0].1), (1568, 523), "{provider:?}");
        // The second request carries both prompts' images; the JPEG stays a JPEG.
        let second = sent_images(provider, &requests[1].body);
        assert_eq!(second.len(), 2);
        assert_eq!(second[1].0, "image/jpeg", "{provider:?}");
        assert_eq!(
            image::guess_format(&second[1].1).unwrap(),
            ImageFormat::Jpeg
        );
        assert_eq!(dimensions(&second[1].1), (588, 1568), "{provider:?}");
    }
}

#[test]
fn a_corrupt_image_is_refused_and_leaves_nothing_behind() {
    for provider in BOTH {
        let (setup, mut client, session) =
            start(provider, true, json!({"responses": [text(&["fine"])]}));
        let good = png(8, 8);
        let corrupt = good[..good.len() - 16].to_vec();
        let jpeg = encoded(8, 8, ImageFormat::Jpeg);
        let text = json!({"type": "text", "text": "the refused prompt"});
        for (blocks, expected) in [
            (
                json!([text, image_block(&corrupt, "image/png")]),
                "`prompt[1]`: the image could not be decoded: ",
            ),
            (
                json!([text, image_block(&jpeg, "image/png")]),
                "`prompt[1]`: the image could not be decoded: the data is a JPEG image, not image/png",
            ),
            (
                json!([image_block(&good, "image/tiff"), text]),
                "`prompt[0]`: the image has mimeType `image/tiff`; the accepted types are image/png, image/jpeg, image/gif or image/webp",
            ),
        ] {
            let message = refused(&mut client, &session, blocks);
            assert!(message.contains(expected), "{provider:?}: {message}");
        }

        // The next prompt runs, and the model never hears of the refused ones.
        let response = client.prompt(&session, "the next prompt");
        assert_eq!(response["result"]["stopReason"], "end_turn");
        let requests = setup.mock.requests();
        assert_eq!(requests.len(), 1);
        let body = requests[0].body.to_string();
        assert!(body.contains("the next prompt"));
        assert!(!body.contains("the refused prompt"), "{provider:?}");
        assert!(sent_images(provider, &requests[0].body).is_empty());

        // Nor is any of them in the log.
        let mut fresh = engine(&config(&setup, provider, true));
        load(&mut fresh, &session, &setup.cwd());
        let replayed: Vec<Value> = fresh
            .updates(&session)
            .into_iter()
            .filter(|u| u["sessionUpdate"] == "user_message_chunk")
            .map(|u| u["content"].clone())
            .collect();
        assert_eq!(
            replayed,
            vec![json!({"type": "text", "text": "the next prompt"})]
        );
    }
}

#[test]
fn a_model_without_vision_refuses_an_image_prompt() {
    for provider in BOTH {
        let (setup, mut client, session) = start(
            provider,
            false,
            json!({"responses": [text(&["text only"])]}),
        );
        let blocks =
            json!([{"type": "text", "text": "look"}, image_block(&png(4, 4), "image/png")]);
        let message = refused(&mut client, &session, blocks);
        assert!(
            message.contains("`prompt[1]`: the current model")
                && message.contains("does not take images"),
            "{message}"
        );
        assert!(setup.mock.requests().is_empty());
        assert_eq!(
            client.prompt(&session, "just text")["result"]["stopReason"],
            "end_turn"
        );
    }
}

/// After a switch to a model without vision, the images already in the conversation go to
/// it as notes saying one was there, in both dialects (before: as images, which a text-only
/// endpoint refuses, failing every later prompt); switched back, as images again.
#[test]
fn a_model_without_vision_gets_notes_where_the_conversation_had_images() {
    for provider in BOTH {
        let setup = Setup::new(json!({"responses": [
            text(&["seen"]), text(&["blind"]), text(&["seen again"]),
        ]}));
        let mut config = config(&setup, provider, true);
        let model = config["model"].as_str().unwrap().to_string();
        config["models"] = json!([{"id": model, "vision": true},
                                   {"id": format!("{model}-blind"), "vision": false}]);
        let mut client = engine(&config);
        let session = client.new_session(&setup.cwd());
        let blocks =
            json!([{"type": "text", "text": "look"}, image_block(&png(4, 4), "image/png")]);
        assert_eq!(
            prompt(&mut client, &session, blocks)["result"]["stopReason"],
            "end_turn"
        );
        for (to, text) in [
            (format!("{model}-blind"), "and now?"),
            (model.clone(), "again"),
        ] {
            client.call(
                "session/set_config_option",
                json!({"sessionId": session, "configId": "model", "value": to}),
            );
            client.prompt(&session, text);
        }
        let requests = setup.mock.requests();
        let images = |n: usize| sent_images(provider, &requests[n].body).len();
        assert_eq!((images(0), images(1), images(2)), (1, 0, 1), "{provider:?}");
        let blind = requests[1].body.to_string();
        assert!(
            blind.contains("the current model does not take images"),
            "{provider:?}: {blind}"
        );
    }
}

#[test]
fn an_image_is_replayed_after_a_restart_and_stays_in_the_models_context() {
    for provider in BOTH {
        let setup = Setup::new(json!({"responses": [text(&["seen"]), text(&["still seen"])]}));
        let config = config(&setup, provider, true);
        let bytes = png(20, 10);
        let session = {
            let mut client = engine(&config);
            let session = client.new_session(&setup.cwd());
            let blocks = json!([{"type": "text", "text": "remember this"}, image_block(&bytes, "image/png")]);
            prompt(&mut client, &session, blocks);
            session
        };
        let mut client = engine(&config);
        load(&mut client, &session, &setup.cwd());
        assert_eq!(
            replayed_images(&client, &session),
            vec![("image/png".to_string(), bytes.clone(), Value::Null)],
            "{provider:?}"
        );
        client.prompt(&session, "what did I show you?");
        let requests = setup.mock.requests();
        assert_eq!(
            sent_images(provider, &requests[1].body),
            vec![("image/png".to_string(), bytes)],
            "{provider:?}"
        );
    }
}

#[test]
fn images_are_read_from_file_and_data_uris() {
    let (setup, mut client, session) = start(
        Provider::OpenAi,
        true,
        json!({"responses": [text(&["two"])]}),
    );
    let path = setup.dir.path().join("shot one.png");
    std::fs::write(&path, png(2000, 500)).unwrap();
    let shot_uri = file_uri(&path);
    let small = png(5, 5);
    let data_uri = format!("data:image/png;base64,{}", STANDARD.encode(&small));
    let blocks = json!([
        {"type": "image", "data": "", "mimeType": "image/png", "uri": shot_uri},
        {"type": "image", "data": "", "mimeType": "", "uri": data_uri},
    ]);
    assert_eq!(
        prompt(&mut client, &session, blocks)["result"]["stopReason"],
        "end_turn"
    );
    let sent = sent_images(Provider::OpenAi, &setup.mock.requests()[0].body);
    assert_eq!(dimensions(&sent[0].1), (1568, 392));
    assert_eq!(sent[1], ("image/png".to_string(), small));

    // The log keeps the prepared image with the uri it came from.
    let mut fresh = engine(&config(&setup, Provider::OpenAi, true));
    load(&mut fresh, &session, &setup.cwd());
    let replayed = replayed_images(&fresh, &session);
    assert_eq!(dimensions(&replayed[0].1), (1568, 392));
    assert_eq!(replayed[0].2, json!(shot_uri));

    let missing = std::path::PathBuf::from(absolute("/no/such/image.png"));
    for (uri, expected) in [
        (
            "https://example.com/a.png".to_string(),
            "is not a local file:// path or a data: URL".to_string(),
        ),
        (
            file_uri(&missing),
            format!("could not be read from {}", missing.display()),
        ),
    ] {
        let blocks = json!([{"type": "image", "data": "", "mimeType": "image/png", "uri": uri}]);
        let message = refused(&mut client, &session, blocks);
        assert!(message.contains(&expected), "{message}");
    }

    // Not a regular file: a directory, and on Unix a FIFO, which opened for reading would wait
    // for a writer in the session's job (before: no answer, and the session's later requests
    // none either; `/dev/stdin` read the engine's own protocol input).
    let mut special = vec![setup.dir.path().to_path_buf()];
    #[cfg(unix)]
    {
        let fifo = setup.dir.path().join("pipe.png");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        special.push(fifo);
    }
    for path in special {
        let blocks =
            json!([{"type": "image", "data": "", "mimeType": "image/png", "uri": file_uri(&path)}]);
        let message = refused(&mut client, &session, blocks);
        assert!(message.contains("which is not a regular file"), "{message}");
    }
}

#[test]
fn read_returns_an_image_file_to_the_model() {
    for provider in BOTH {
        let script = json!({"responses": [
            call("call_1", "read", json!({"path": "diagram.png"})),
            text(&["a diagram"]),
        ]});
        let (setup, mut client, session) = start(provider, true, script);
        std::fs::write(setup.dir.path().join("diagram.png"), png(1800, 900)).unwrap();
        assert_eq!(
            client.prompt(&session, "look at diagram.png")["result"]["stopReason"],
            "end_turn"
        );
        let requests = setup.mock.requests();
        let sent = sent_images(provider, &requests[1].body);
        assert_eq!(sent.len(), 1, "{provider:?}");
        assert_eq!(sent[0].0, "image/png");
        assert_eq!(dimensions(&sent[0].1), (1568, 784), "{provider:?}");
        let body = requests[1].body.to_string();
        assert!(
            body.contains("diagram.png: a PNG image, 1800×900 px, downscaled to 1568×784"),
            "{provider:?}"
        );
        // The client sees the image in the finished tool call.
        let finished = client
            .updates(&session)
            .into_iter()
            .find(|u| u["sessionUpdate"] == "tool_call_update" && u["status"] == "completed")
            .unwrap();
        let shown = &finished["content"][0]["content"];
        assert_eq!(shown["type"], "image");
        assert_eq!(shown["mimeType"], "image/png");
        let shown = STANDARD.decode(shown["data"].as_str().unwrap()).unwrap();
        assert_eq!(shown, sent[0].1);
    }
}

#[test]
fn read_tells_a_model_without_vision_what_the_image_is() {
    let (setup, mut client, session) = start(
        Provider::OpenAi,
        false,
        json!({"responses": [
            call("call_1", "read", json!({"path": "logo.png"})),
            text(&["cannot see it"]),
        ]}),
    );
    std::fs::write(setup.dir.path().join("logo.png"), png(64, 32)).unwrap();
    client.prompt(&session, "what is logo.png?");
    let results = common::tool_results(&setup, 1);
    assert!(
        results[0].starts_with(
            "logo.png is a PNG image (64×32 px). The current model cannot view images"
        ),
        "{results:?}"
    );
    assert!(sent_images(Provider::OpenAi, &setup.mock.requests()[1].body).is_empty());
}
