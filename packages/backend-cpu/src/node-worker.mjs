// @ts-check
// Piscina worker for the CPU backend in Node.
import { runSlice } from './runner.mjs';

export default runSlice;
