// Hearth's `session/request_permission` → the choices a VS Code quick pick shows, and the
// pick → the ACP answer. Pure functions, so they are tested under node:test without VS Code.

import type * as acp from '@agentclientprotocol/sdk' with { 'resolution-mode': 'import' }

/** A `vscode.QuickPickItem` plus the ACP option it stands for. */
export interface PermissionChoice {
  label: string
  description?: string
  optionId: string
}

const KIND_LABELS: Record<string, string> = {
  allow_once: 'Allow',
  allow_always: 'Always allow',
  reject_once: 'Reject',
  reject_always: 'Always reject',
}

/** One choice per option Hearth offers, in Hearth's order (it puts the safest default first). */
export function permissionChoices(request: acp.RequestPermissionRequest): PermissionChoice[] {
  return request.options.map((option) => ({
    label: KIND_LABELS[option.kind] ?? option.name,
    description: option.name,
    optionId: option.optionId,
  }))
}

/** The quick pick's title: what the agent wants to do. */
export function permissionTitle(request: acp.RequestPermissionRequest): string {
  return `Hearth wants to run: ${request.toolCall.title ?? request.toolCall.toolCallId}`
}

/** A dismissed quick pick (undefined) cancels the request, which Hearth treats as a rejection. */
export function permissionResponse(choice: PermissionChoice | undefined): acp.RequestPermissionResponse {
  return choice
    ? { outcome: { outcome: 'selected', optionId: choice.optionId } }
    : { outcome: { outcome: 'cancelled' } }
}
