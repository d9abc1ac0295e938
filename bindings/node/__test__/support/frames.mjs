// Raw-frame helpers: an engine whose frames land in a queue the test can await.

export { Engine } from 'hearth-acp'

/** A FIFO of frames with `next()` to await the next one, parsed. */
export class FrameQueue {
  #frames = []
  #waiters = []

  push = (frame) => {
    const message = JSON.parse(frame)
    const waiter = this.#waiters.shift()
    if (waiter) waiter(message)
    else this.#frames.push(message)
  }

  next(timeoutMs = 10_000) {
    if (this.#frames.length > 0) return Promise.resolve(this.#frames.shift())
    return new Promise((resolve, reject) => {
      const waiter = (message) => {
        clearTimeout(timer)
        resolve(message)
      }
      const timer = setTimeout(() => {
        this.#waiters.splice(this.#waiters.indexOf(waiter), 1)
        reject(new Error(`no frame within ${timeoutMs} ms`))
      }, timeoutMs)
      this.#waiters.push(waiter)
    })
  }
}

export function request(id, method, params) {
  return JSON.stringify({ jsonrpc: '2.0', id, method, params })
}

export const initialize = (id) =>
  request(id, 'initialize', {
    protocolVersion: 1,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    clientInfo: { name: 'hearth-node-test', version: '0.0.0' },
  })
