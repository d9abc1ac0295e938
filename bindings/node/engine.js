'use strict'
// The public API of `hearth-acp`: a thin JS layer over the native engine (index.js, the
// loader napi-rs generates). It adds only what the native class can't do well: config objects, a
// callback that is allowed to throw, the Web streams the official ACP SDK connects to, and
// `Symbol.asyncDispose`. There is no protocol logic here: frames pass through untouched.

const { NativeEngine } = require('./index.js')
const { MessageStream } = require('./message-stream.js')

function reportToConsole(error) {
  console.error('hearth-acp: delivering a frame failed; the engine goes on.', error)
}

function configJson(config) {
  if (config === undefined || config === null) return ''
  if (typeof config === 'string') return config
  if (typeof config === 'object') return JSON.stringify(config)
  throw new TypeError(`config must be an object or a JSON string, not ${typeof config}`)
}

class Engine {
  #native
  // Who receives frames: the user's callback, or the stream currently handed out.
  #onFrame
  #stream = null
  #onError
  #closed // resolves once the engine's end marker has been delivered
  #closing = null
  // Answers send() got back from the native engine, not yet handed to onFrame (see #answer).
  #answers = []

  /**
   * @param {object | string} [config] the Hearth config (object or JSON text)
   * @param {((frame: string) => void) | null} [onFrame] receives every frame; omit it (or
   *   pass null) to use stream()
   * @param {{ onError?: (error: unknown) => void }} [options]
   */
  constructor(config, onFrame, options) {
    if (onFrame != null && typeof onFrame !== 'function') {
      throw new TypeError('onFrame must be a function (or omitted, to use engine.stream())')
    }
    this.#onFrame = onFrame ?? null
    this.#onError = options?.onError ?? reportToConsole
    let markClosed
    this.#closed = new Promise((resolve) => (markClosed = resolve))
    // Runs on the JS thread for each frame, in the engine's order, then once with null.
    // It must never throw: a throw inside a threadsafe-function call is an uncaught
    // exception, which kills the process.
    const receive = (frame) => {
      // Whatever send() got back came before this frame: the engine returns an answer only
      // when no frame is queued for this callback ahead of it.
      this.#flushAnswers()
      if (frame === null) {
        this.#stream?.end()
        markClosed()
      } else {
        this.#dispatch(frame)
      }
    }
    this.#native = new NativeEngine(configJson(config), receive)
  }

  #dispatch(frame) {
    try {
      if (this.#onFrame) this.#onFrame(frame)
      else this.#stream?.deliver(frame)
    } catch (error) {
      this.#report(error)
    }
  }

  #report(error) {
    try {
      this.#onError(error)
    } catch {
      // The error hook threw too; there is nowhere left to report it.
    }
  }

  /**
   * Hands the engine one client frame (JSON-RPC text). Never blocks.
   * Throws an Error with code ERR_HEARTH_CLOSED once the engine is closed.
   */
  send(frame) {
    if (typeof frame !== 'string') throw new TypeError('frame must be a string of JSON-RPC text')
    const answer = this.#native.send(frame)
    if (answer !== null) this.#answer(answer)
  }

  // The answer to a request the engine served at once comes back from the native send instead
  // of through the engine's delivery thread and the event loop, which would cost two thread
  // wake-ups. It is handed to onFrame in a microtask: after send() returns, as every frame
  // is (so a caller may register what it waits for after sending), and before any later frame.
  #answer(frame) {
    this.#answers.push(frame)
    if (this.#answers.length === 1) queueMicrotask(() => this.#flushAnswers())
  }

  #flushAnswers() {
    if (this.#answers.length === 0) return
    const answers = this.#answers
    this.#answers = []
    for (const frame of answers) this.#dispatch(frame)
  }

  /**
   * The engine as the `{ readable, writable }` pair of JSON-RPC message objects that
   * `@agentclientprotocol/sdk` connects to. Only for an engine constructed without onFrame,
   * and one stream at a time: a new one can be had once the last one's readable was
   * cancelled (the SDK does so when its connection ends).
   */
  stream() {
    if (this.#onFrame) {
      throw new Error('stream() is only available on an engine constructed without onFrame')
    }
    if (this.#closing) throw closedError()
    if (this.#stream && !this.#stream.cancelled) {
      throw new Error('this engine already has an open stream; cancel its readable first')
    }
    this.#stream = new MessageStream((frame) => this.send(frame), (error) => this.#report(error))
    return this.#stream.pair
  }

  /**
   * Closes the engine: cancels running prompts (they answer `cancelled`), flushes the store
   * and stops the engine's threads, off the JS thread. Resolves once every frame has been
   * delivered and the open stream's readable has closed. Idempotent.
   */
  close() {
    this.#closing ??= Promise.all([this.#native.close(), this.#closed]).then(() => undefined)
    return this.#closing
  }

  // Defined by Node itself since 18.18 / 20.4, ahead of the language.
  [Symbol.asyncDispose]() {
    return this.close()
  }
}

function closedError() {
  const error = new Error('the engine is closed')
  error.code = 'ERR_HEARTH_CLOSED'
  return error
}

module.exports = { Engine }
