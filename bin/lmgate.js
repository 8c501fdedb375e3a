#!/usr/bin/env node
// The operator's command (`npx lmgate --help`); the build puts the code in dist/.
import '../dist/main.js';
