/**
 * Process environment the CLI sets up before any backend loads.
 *
 * Dawn (the webgpu package) needs a Vulkan driver. On a machine with no GPU at
 * all (no /dev/dri render nodes, no /dev/nvidia*), the only driver that works is
 * the SwiftShader one Debian's chromium ships (Mesa's lavapipe in Debian 12 is
 * too old for Dawn, shared/PLATFORM.md). So, when the user has not chosen a
 * driver (VK_ICD_FILENAMES / VK_DRIVER_FILES unset) and there is no GPU device
 * node, point Vulkan at SwiftShader. The adapter then reports itself as
 * software, which createDevice demotes below cpu, so nothing is hidden.
 */
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const SWIFTSHADER_ICD = '/usr/lib/chromium/vk_swiftshader_icd.json';

/** What was changed, for the results file; empty if nothing was. */
export const environmentNotes: string[] = [];

function hasGpuDeviceNode(): boolean {
  try {
    if (existsSync('/dev/dri') && readdirSync('/dev/dri').some((f) => f.startsWith('renderD'))) return true;
    return readdirSync('/dev').some((f) => /^nvidia\d+$/.test(f));
  } catch {
    return true; // cannot tell: leave the environment alone
  }
}

export function prepareEnvironment(env: NodeJS.ProcessEnv = process.env): void {
  if (env.TRIDENT_NO_AUTO_VULKAN) return;
  if (!env.VK_ICD_FILENAMES && !env.VK_DRIVER_FILES && existsSync(SWIFTSHADER_ICD) && !hasGpuDeviceNode()) {
    env.VK_ICD_FILENAMES = SWIFTSHADER_ICD;
    environmentNotes.push(
      `VK_ICD_FILENAMES=${SWIFTSHADER_ICD} (no GPU device node; set VK_ICD_FILENAMES or TRIDENT_NO_AUTO_VULKAN=1 to choose)`,
    );
  }
  if (!env.XDG_RUNTIME_DIR) {
    // Dawn's Vulkan loader path complains on every device without it.
    const dir = join(tmpdir(), `trident-xdg-${process.getuid?.() ?? 'user'}`);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    env.XDG_RUNTIME_DIR = dir;
  }
}
