/**
 * The WebGPU adapter in Node (Dawn): why it is unavailable, said so a user can act,
 * and the Dawn instance it runs on.
 */
import { execFileSync } from 'node:child_process';
import { noAdapterReason, type WebGpuDevice, webgpuAdapter } from '@trident/backend-webgpu';
import { afterEach, describe, expect, it } from 'vitest';

const saved = { icd: process.env.VK_ICD_FILENAMES, driver: process.env.VK_DRIVER_FILES };

describe('webgpu adapter (Node)', () => {
  afterEach(() => {
    for (const [key, value] of [
      ['VK_ICD_FILENAMES', saved.icd],
      ['VK_DRIVER_FILES', saved.driver],
    ] as const) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  });

  it('says to point Vulkan at SwiftShader when no driver is configured', () => {
    delete process.env.VK_ICD_FILENAMES;
    delete process.env.VK_DRIVER_FILES;
    expect(noAdapterReason('node')).toContain('VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json');
    process.env.VK_ICD_FILENAMES = '/nowhere.json';
    expect(noAdapterReason('node')).toContain('/nowhere.json');
  });

  it('reports a Dawn without a usable Vulkan driver as BackendUnavailableError naming the setting', () => {
    // A fresh process: Dawn reads the Vulkan environment once per instance. A driver
    // list naming only a missing file leaves the Vulkan loader without any driver.
    const script = `
      const { webgpuAdapter } = await import('@trident/backend-webgpu');
      try { await webgpuAdapter.create(); console.log('GOT DEVICE'); }
      catch (e) { console.log(e.constructor.name + ': ' + e.message); }`;
    const env: NodeJS.ProcessEnv = { ...process.env, VK_ICD_FILENAMES: '/nonexistent/trident_icd.json' };
    delete env.VK_DRIVER_FILES;
    const args = ['--conditions=trident-source', '--import', 'tsx', '--input-type=module', '-e', script];
    const out = execFileSync(process.execPath, args, { env, encoding: 'utf8' });
    expect(out).toContain('BackendUnavailableError');
    expect(out).toContain("backend 'webgpu' is unavailable: Dawn found no adapter (VK_ICD_FILENAMES=/nonexistent/trident_icd.json");
  });

  it('holds the Dawn instance on the device for its whole life', async () => {
    const device = (await webgpuAdapter.create(undefined)) as WebGpuDevice;
    try {
      expect(device.keepAlive).toBeDefined();
      expect(typeof (device.keepAlive as GPU).requestAdapter).toBe('function');
    } finally {
      await device.destroy();
    }
  });
});
