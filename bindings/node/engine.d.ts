// Types of `hearth-acp` (engine.js). The native layer's own types, generated, are in
// index.d.ts; this file describes the wrapper that users import.

/** Where the engine keeps its data, which model it uses and how it reaches it. */
export interface Config {
  /** Directory of `hearth.db`, or `":memory:"`. Default: the platform data dir. */
  dataDir?: string
  /** Directory of the user's own `AGENTS.md`. Default: the platform config dir's `hearth`. */
  configDir?: string
  /** Threads of the engine's runtime. Default 2. */
  workerThreads?: number
  /** The default model id. Default: `$HEARTH_MODEL`, else `gpt-4o-mini`. */
  model?: string
  providers?: {
    /** Any OpenAI-compatible chat-completions server. */
    openai?: {
      /** Default: `$OPENAI_BASE_URL`, else `https://api.openai.com/v1`. */
      baseUrl?: string
      /** Default: `$OPENAI_API_KEY`. Kept in memory only: never written, never logged. */
      apiKey?: string
    }
  }
  /** Longest silence tolerated inside a model stream, in seconds. Default 120. */
  streamIdleTimeoutSecs?: number
}

/** A JSON-RPC 2.0 message: a request, a notification or a response. */
export interface JsonRpcMessage {
  jsonrpc: '2.0'
  id?: string | number | null
  method?: string
  params?: unknown
  result?: unknown
  error?: { code: number; message: string; data?: unknown }
}

/**
 * The engine as a pair of Web streams of message objects: the `Stream` that
 * `@agentclientprotocol/sdk` connects to (`acp.client(...).connectWith(engine.stream(), ...)`).
 */
export interface MessageStream<Message = JsonRpcMessage> {
  /** Every message the engine sends, in order. Closes when the engine closes. */
  readable: ReadableStream<Message>
  /** Each message written is serialised and handed to the engine. */
  writable: WritableStream<Message>
}

export interface EngineOptions {
  /**
   * Receives what the frame callback throws; the engine goes on delivering. Default: the
   * error is printed with `console.error`.
   */
  onError?: (error: unknown) => void
}

/**
 * Errors the engine throws carry a `code`: `ERR_HEARTH_CONFIG` (the message names the key),
 * `ERR_HEARTH_STORE`, `ERR_HEARTH_START` or `ERR_HEARTH_CLOSED`.
 */
export type EngineErrorCode = 'ERR_HEARTH_CONFIG' | 'ERR_HEARTH_STORE' | 'ERR_HEARTH_START' | 'ERR_HEARTH_CLOSED'

/** What the constructor, `send` and `stream` throw when the engine refuses. */
export interface EngineError extends Error {
  code: EngineErrorCode
}

/**
 * A Hearth engine in this process: ACP JSON-RPC frames in, frames out.
 *
 * While it is open it keeps Node's event loop alive, as an open socket does, so that its
 * frames can arrive: always `close()` it (or `await using` it).
 */
export declare class Engine {
  /**
   * Starts an engine.
   *
   * @param config the config object, or its JSON text; omitted: all defaults.
   * @param onFrame receives every frame the engine sends, as JSON text, on the JS thread, in
   *   order, never from inside `send` (an answer made at once comes in the microtask after
   *   `send` returns). If it throws, the error goes to `options.onError` and delivery goes on. Omit it
   *   (or pass null) to talk to the engine through `stream()` instead.
   * @throws Error with `code` `ERR_HEARTH_CONFIG` when the config is invalid.
   */
  constructor(
    config?: Config | string | null,
    onFrame?: ((frame: string) => void) | null,
    options?: EngineOptions,
  )

  /**
   * Hands the engine one client frame (JSON-RPC text). Never blocks. May be called from
   * inside `onFrame`.
   * @throws Error with `code` `ERR_HEARTH_CLOSED` once the engine is closed.
   */
  send(frame: string): void

  /**
   * The engine as the `{ readable, writable }` pair of message objects that the official
   * ACP SDK connects to. Only on an engine constructed without `onFrame`, and one stream at
   * a time: another can be had once the last one's readable was cancelled (as the SDK does
   * when its connection ends). Frames that arrive while no stream is open are dropped.
   *
   * The type parameter lets the pair take the SDK's own message type
   * (`engine.stream<AnyMessage>()`); TypeScript usually infers it.
   */
  stream<Message = JsonRpcMessage>(): MessageStream<Message>

  /**
   * Closes the engine: running prompts are cancelled (and answered `cancelled`), the store
   * is flushed and the engine's threads stop, off the JS thread. Resolves once every frame
   * has been delivered and the open stream's readable has closed. Idempotent.
   */
  close(): Promise<void>

  /** `close()`, for `await using engine = new Engine(...)`. */
  [Symbol.asyncDispose](): Promise<void>
}
