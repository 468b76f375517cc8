// An exactly-once consume-transform-produce pipeline with kafkajs (producer.transaction(),
// sendOffsets) and a read_committed consumer. Prints "progress N" after each commit and
// {"done": N, "aborted": M, "failed": F} at the end, N counting from the group's committed offsets
// (a restarted pipeline resumes where the last one committed). kafkajs's own log
// (KAFKAJS_LOG=info|debug) goes to stderr: stdout is the progress channel.
// Usage: node eos_pipeline.js BROKERS INPUT OUTPUT GROUP TOTAL
//
// The transaction whose batch crosses TOTAL/2 is aborted on purpose, and the engine may be killed
// at any time (the test does it): a batch whose transaction did not commit is redone in a new
// transaction, still in memory (a seek back would race kafkajs's prefetched batches). After a
// failure the producer is replaced: its transactional InitProducerId waits until the coordinator
// has finished the old transaction, so the group's committed offset then says whether it committed
// after all (kafkajs's connect() alone does not send that InitProducerId: see newProducer).
//
// kafkajs 2.2.4 can lock up node when its consumer stops (disconnect(), or the restart after a
// crash) while its fetch manager is rebalancing its fetchers (the broker pool changed, as after a
// broker restart): fetchManager.start() catches KafkaJSFetcherRebalanceError and creates new
// fetchers without checking that the runner has stopped, and their fetch loop then spins on
// Runner.fetch()'s immediate [] ("consumer not running, exiting") in microtasks only, so no timer
// or socket is ever served again (the kafkajs issues #1384/#1387 loop, on another path). So this
// script never disconnects its consumer: once done it exits (the transactions committed the
// offsets), and the test restarts a pipeline that stops making progress, as a liveness probe would.
//
// kafkajs 2.2.4 can also write a batch twice in one transaction: a send() to partitions on several
// brokers that fails on one broker is retried for every broker without a response in a map keyed
// by Broker object (producer/sendMessages.js), and after a broker restart the cluster holds new
// Broker objects, so partitions already acknowledged are sent again with their next sequence
// numbers, which no broker can tell from new records. So each send() here writes one partition.
const fs = require('fs')
const { Kafka, logLevel } = require('kafkajs')

const [brokers, input, output, groupId, totalArg] = process.argv.slice(2)
const total = Number(totalArg)
const PLANNED_ABORT = 'abort this transaction'

async function main () {
  const kafka = new Kafka({
    clientId: 'kafkajs-eos',
    brokers: brokers.split(','),
    logLevel: process.env.KAFKAJS_LOG === 'debug' ? logLevel.DEBUG : (process.env.KAFKAJS_LOG ? logLevel.INFO : logLevel.NOTHING),
    logCreator: () => ({ level, log }) => fs.writeSync(2, JSON.stringify({ level, ...log }) + '\n'),
    retry: { retries: 30, maxRetryTime: 2000 }
  })
  const admin = kafka.admin()
  await admin.connect()
  let producer = await newProducer(kafka)
  const consumer = kafka.consumer({ groupId, readUncommitted: false, maxBytesPerPartition: 32 << 10 })
  // A crashed consumer would leave the pipeline waiting forever: fail loudly instead.
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    if (!payload.restart) {
      console.error('consumer crashed', payload.error)
      process.exit(2)
    }
  })
  await consumer.connect()
  await consumer.subscribe({ topic: input, fromBeginning: true })
  let done = await committedTotal(admin, groupId, input)
  let aborted = 0
  let failed = 0
  let finish
  const finished = new Promise(resolve => { finish = resolve })

  async function committedAfter (batch, why) {
    const [topic] = await retrying(() => admin.fetchOffsets({ groupId, topics: [batch.topic] }))
    const found = topic.partitions.find(p => p.partition === batch.partition)
    if (why) console.error(`${why}: committed ${JSON.stringify(found)}, batch ${batch.partition} ${batch.firstOffset()}-${batch.lastOffset()}`)
    return found !== undefined && BigInt(found.offset) > BigInt(batch.lastOffset())
  }

  async function processOnce (batch) {
    const txn = await producer.transaction()
    try {
      // One partition per send (the input batch's number): see kafkajs's resend above.
      const messages = batch.messages.map(m => ({ key: m.key, value: m.value, partition: batch.partition }))
      await txn.send({ topic: output, messages })
      const next = (BigInt(batch.lastOffset()) + 1n).toString()
      await txn.sendOffsets({
        consumerGroupId: groupId,
        topics: [{ topic: batch.topic, partitions: [{ partition: batch.partition, offset: next }] }]
      })
      if (aborted === 0 && done < total / 2 && done + batch.messages.length >= total / 2) {
        throw new Error(PLANNED_ABORT)
      }
      await txn.commit()
      return true
    } catch (error) {
      if (error.message === PLANNED_ABORT) {
        try {
          await txn.abort()
          aborted += 1
          return false
        } catch (abortError) { // the engine went down: the new producer's InitProducerId aborts it
          error = abortError
        }
      }
      failed += 1
      await producer.disconnect().catch(() => {})
      producer = await newProducer(kafka)
      return committedAfter(batch, `transaction failed (${error.message})`)
    }
  }

  await consumer.run({
    autoCommit: false,
    eachBatchAutoResolve: false,
    eachBatch: async ({ batch, resolveOffset }) => {
      if (batch.messages.length === 0) return
      if (await committedAfter(batch)) { // redelivered after a consumer restart: done already
        resolveOffset(batch.lastOffset())
        return
      }
      while (!(await processOnce(batch))) { /* redo the batch in a new transaction */ }
      resolveOffset(batch.lastOffset())
      done += batch.messages.length
      console.log(`progress ${done}`)
      if (done >= total) finish()
    }
  })
  if (done >= total) finish()
  await finished
  await producer.disconnect()
  await admin.disconnect()
  console.log(JSON.stringify({ done, aborted, failed }))
  process.exit(0) // not consumer.disconnect(): see the kafkajs lock-up above
}

async function committedTotal (admin, groupId, input) {
  const [topic] = await retrying(() => admin.fetchOffsets({ groupId, topics: [input] }))
  return topic.partitions.reduce((sum, p) => sum + Math.max(Number(p.offset), 0), 0)
}

// Calls that meet the engine restarting are tried again (for a minute at most).
async function retrying (call) {
  for (let attempt = 0; ; attempt++) {
    try {
      return await call()
    } catch (error) {
      if (attempt >= 200) throw error
      await new Promise(resolve => setTimeout(resolve, 300))
    }
  }
}

async function newProducer (kafka) {
  for (;;) {
    const producer = kafka.producer({ transactionalId: 'kafkajs-eos', idempotent: true, maxInFlightRequests: 1 })
    try {
      await producer.connect()
      // connect() only asks for an idempotent producer id (no transactional id, no fencing):
      // kafkajs sends the transactional InitProducerId at the first transaction(). Do it now,
      // so that the old producer's transaction is finished before its offsets are read.
      await (await producer.transaction()).abort()
      return producer
    } catch (error) {
      await producer.disconnect().catch(() => {})
      await new Promise(resolve => setTimeout(resolve, 500))
    }
  }
}

main().catch(error => { console.error(error); process.exit(1) })
