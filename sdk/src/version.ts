/** This package's version (sdk/package.json), sent in the user-agent; test/sdk/client.test.ts keeps them equal. */
export const SDK_VERSION = '1.2.0';
