'use strict'
// The object-level Web stream pair that `@agentclientprotocol/sdk` connects to
// (`acp.client(...).connectWith(stream, ...)`): the readable yields each frame the engine
// delivers, parsed; the writable serialises each message and sends it. No bytes and no
// line splitting: the engine already speaks in whole frames.

class MessageStream {
  #controller
  #report
  cancelled = false

  /**
   * @param {(frame: string) => void} send hands a frame to the engine
   * @param {(error: unknown) => void} report where a frame that can't be parsed goes
   */
  constructor(send, report) {
    this.#report = report
    this.pair = {
      // The engine can't be paused, so there is no backpressure to apply: frames queue in
      // the readable until the reader takes them.
      readable: new ReadableStream({
        start: (controller) => {
          this.#controller = controller
        },
        cancel: () => {
          this.cancelled = true
        },
      }),
      writable: new WritableStream({
        write: (message) => send(JSON.stringify(message)),
      }),
    }
  }

  /** A frame from the engine. Dropped once the reader has gone away, as a closed pipe would. */
  deliver(frame) {
    if (this.cancelled) return
    let message
    try {
      message = JSON.parse(frame)
    } catch (error) {
      this.#report(new Error(`the engine delivered a frame that is not JSON: ${error.message}`))
      return
    }
    this.#controller.enqueue(message)
  }

  /** The engine has closed: no frame follows. */
  end() {
    if (!this.cancelled) this.#controller.close()
  }
}

module.exports = { MessageStream }
