// The VS Code side of the example: commands, the output channel, SecretStorage, the quick pick.
// Everything that talks to Hearth is in chat.ts, which runs (and is tested) without VS Code.

import * as vscode from 'vscode'

import { HearthChat } from './chat.js'
import type { PermissionChoice } from './permissions.js'

const SECRET_KEY = 'hearth.apiKey'

let chat: Promise<HearthChat> | undefined
let output: vscode.OutputChannel | undefined

export function activate(context: vscode.ExtensionContext): void {
  output = vscode.window.createOutputChannel('Hearth')
  context.subscriptions.push(
    output,
    vscode.commands.registerCommand('hearth.setApiKey', () => setApiKey(context)),
    vscode.commands.registerCommand('hearth.ask', () => ask(context)),
    // A new key or endpoint takes effect with the next engine.
    context.secrets.onDidChange((event) => event.key === SECRET_KEY && restart()),
    vscode.workspace.onDidChangeConfiguration((event) => event.affectsConfiguration('hearth') && restart()),
  )
}

export async function deactivate(): Promise<void> {
  await restart()
}

async function restart(): Promise<void> {
  const running = chat
  chat = undefined
  await (await running?.catch(() => undefined))?.dispose()
}

async function setApiKey(context: vscode.ExtensionContext): Promise<boolean> {
  const key = await vscode.window.showInputBox({
    title: 'Hearth: API key',
    prompt: 'Kept in VS Code\'s secret storage and handed to Hearth in its config.',
    password: true,
    ignoreFocusOut: true,
  })
  if (!key) return false
  await context.secrets.store(SECRET_KEY, key)
  return true
}

/** The running engine, started on first use with the key from SecretStorage. */
async function hearth(context: vscode.ExtensionContext): Promise<HearthChat | undefined> {
  if (chat) return chat
  let apiKey = await context.secrets.get(SECRET_KEY)
  if (!apiKey) {
    if (!(await setApiKey(context))) return undefined
    apiKey = await context.secrets.get(SECRET_KEY)
  }
  const settings = vscode.workspace.getConfiguration('hearth')
  await vscode.workspace.fs.createDirectory(context.globalStorageUri)
  chat = HearthChat.start({
    dataDir: context.globalStorageUri.fsPath,
    apiKey: apiKey ?? '',
    baseUrl: settings.get<string>('baseUrl') || undefined,
    model: settings.get<string>('model') || undefined,
    pick: (title, choices) =>
      Promise.resolve(vscode.window.showQuickPick<PermissionChoice>(choices, { title, ignoreFocusOut: true })),
  })
  chat.catch(() => (chat = undefined)) // a failed start is retried by the next command
  return chat
}

async function ask(context: vscode.ExtensionContext): Promise<void> {
  const folder = vscode.workspace.workspaceFolders?.[0]
  if (!folder) {
    void vscode.window.showWarningMessage('Hearth works in a folder: open one first.')
    return
  }
  const prompt = await vscode.window.showInputBox({ title: 'Ask Hearth', prompt: `In ${folder.name}` })
  if (!prompt) return
  const channel = output!
  channel.show(true)
  channel.appendLine(`> ${prompt}`)
  try {
    const session = await hearth(context)
    if (!session) return
    const stopReason = await session.ask(folder.uri.fsPath, prompt, (text) => channel.append(text))
    channel.appendLine(`\n[${stopReason}]`)
  } catch (error) {
    channel.appendLine(`\nHearth: ${error instanceof Error ? error.message : String(error)}`)
    void vscode.window.showErrorMessage(`Hearth: ${error instanceof Error ? error.message : String(error)}`)
  }
}
