<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>CalculatorCompute</name>
    <message>
        <source>N must be at least 1.</source>
        <translation>N 至少为 1。</translation>
    </message>
    <message>
        <source>Hybrid shard group size %1 does not divide N = %2: every replica group needs the same number of ranks.</source>
        <translation>混合分片组大小 %1 不能整除 N = %2：每个副本组必须包含相同数量的 rank。</translation>
    </message>
</context>
<context>
    <name>Category</name>
    <message>
        <source>Parameter shard</source>
        <translation>参数分片</translation>
    </message>
    <message>
        <source>Full parameters</source>
        <translation>完整参数</translation>
    </message>
    <message>
        <source>Full gradients</source>
        <translation>完整梯度</translation>
    </message>
    <message>
        <source>Gradient shard</source>
        <translation>梯度分片</translation>
    </message>
    <message>
        <source>FP32 master weights</source>
        <translation>FP32 主权重</translation>
    </message>
    <message>
        <source>Adam momentum (m)</source>
        <translation>Adam 一阶矩 (m)</translation>
    </message>
    <message>
        <source>Adam variance (v)</source>
        <translation>Adam 二阶矩 (v)</translation>
    </message>
    <message>
        <source>Activations</source>
        <translation>激活值</translation>
    </message>
    <message>
        <source>Communication buffers</source>
        <translation>通信缓冲区</translation>
    </message>
    <message>
        <source>Workspace</source>
        <translation>工作区</translation>
    </message>
</context>
<context>
    <name>Precision</name>
    <message>
        <source>bf16 mixed (2+2+12 B)</source>
        <translation>bf16 混合精度 (2+2+12 B)</translation>
    </message>
    <message>
        <source>fp16 mixed (2+2+12 B)</source>
        <translation>fp16 混合精度 (2+2+12 B)</translation>
    </message>
    <message>
        <source>fp32 (4+4+8 B)</source>
        <translation>fp32 (4+4+8 B)</translation>
    </message>
    <message>
        <source>Custom K</source>
        <translation>自定义 K</translation>
    </message>
</context>
<context>
    <name>Screenshot</name>
    <message>
        <source>rendered %1×%2 instead of %3×%4</source>
        <translation>渲染尺寸为 %1×%2，而不是 %3×%4</translation>
    </message>
    <message>
        <source>cannot write %1: %2</source>
        <translation>无法写入 %1：%2</translation>
    </message>
</context>
<context>
    <name>Strategy</name>
    <message>
        <source>DDP (no sharding)</source>
        <translation>DDP（不分片）</translation>
    </message>
    <message>
        <source>ZeRO-1 (optimizer states)</source>
        <translation>ZeRO-1（分片优化器状态）</translation>
    </message>
    <message>
        <source>ZeRO-2 (+ gradients)</source>
        <translation>ZeRO-2（+ 梯度）</translation>
    </message>
    <message>
        <source>ZeRO-3 (+ parameters)</source>
        <translation>ZeRO-3（+ 参数）</translation>
    </message>
    <message>
        <source>FSDP full shard</source>
        <translation>FSDP 完全分片</translation>
    </message>
    <message>
        <source>FSDP shard grad-op</source>
        <translation>FSDP 梯度与优化器分片 (SHARD_GRAD_OP)</translation>
    </message>
    <message>
        <source>FSDP hybrid shard</source>
        <translation>FSDP 混合分片</translation>
    </message>
</context>
<context>
    <name>Tier</name>
    <message>
        <source>Device</source>
        <translation>设备</translation>
    </message>
    <message>
        <source>Host</source>
        <translation>主机内存</translation>
    </message>
    <message>
        <source>NVMe</source>
        <translation>NVMe</translation>
    </message>
</context>
<context>
    <name>main</name>
    <message>
        <source>ZeRO and FSDP, executed and explained.</source>
        <translation>ZeRO 与 FSDP：真实执行，逐项解释。</translation>
    </message>
    <message>
        <source>Render the window to a PNG and exit.</source>
        <translation>将窗口渲染为 PNG 后退出。</translation>
    </message>
    <message>
        <source>Page to show: calculator.</source>
        <translation>要显示的页面：calculator。</translation>
    </message>
    <message>
        <source>UI language: en or zh_CN.</source>
        <translation>界面语言：en 或 zh_CN。</translation>
    </message>
    <message>
        <source>unexpected argument &apos;%1&apos;</source>
        <translation>多余的参数 &apos;%1&apos;</translation>
    </message>
    <message>
        <source>unknown language &apos;%1&apos; (expected: en, zh_CN)</source>
        <translation>未知语言 &apos;%1&apos;（可选：en、zh_CN）</translation>
    </message>
    <message>
        <source>unknown view &apos;%1&apos; (expected: %2)</source>
        <translation>未知视图 &apos;%1&apos;（可选：%2）</translation>
    </message>
</context>
<context>
    <name>shardscope::widgets::CalculatorInputs</name>
    <message>
        <source>Parameter count &quot;%1&quot; is not a number (try 7.5e9 or 1.3B).</source>
        <translation>参数量“%1”不是数字（例如 7.5e9 或 1.3B）。</translation>
    </message>
    <message>
        <source>Parameter count must be at least 1.</source>
        <translation>参数量至少为 1。</translation>
    </message>
    <message>
        <source>Parameter count %1 is too large (at most 10^15).</source>
        <translation>参数量 %1 过大（最多 10^15）。</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Parameters (Ψ)</source>
        <translation>参数量 (Ψ)</translation>
    </message>
    <message>
        <source>Shape</source>
        <translation>结构</translation>
    </message>
    <message>
        <source>Ranks (N)</source>
        <translation>Rank 数 (N)</translation>
    </message>
    <message>
        <source>Strategy</source>
        <translation>策略</translation>
    </message>
    <message>
        <source>Hybrid group size</source>
        <translation>混合分片组大小</translation>
    </message>
    <message>
        <source>Precision</source>
        <translation>精度</translation>
    </message>
    <message>
        <source>Optimizer bytes (K)</source>
        <translation>优化器字节数 (K)</translation>
    </message>
    <message>
        <source>Optimizer state on</source>
        <translation>优化器状态位于</translation>
    </message>
    <message>
        <source>Param shards on</source>
        <translation>参数分片位于</translation>
    </message>
    <message>
        <source>Custom parameter count</source>
        <translation>自定义参数量</translation>
    </message>
    <message>
        <source>e.g. 7.5e9 or 1.3B</source>
        <translation>例如 7.5e9 或 1.3B</translation>
    </message>
    <message>
        <source>Only ZeRO-3 and FSDP shard parameters, so only they can offload them.</source>
        <translation>只有 ZeRO-3 和 FSDP 对参数分片，因此只有它们能卸载参数。</translation>
    </message>
    <message>
        <source>%1 layers · d_model %2 · %3 heads · vocab %4 · seq %5 (%6 params)</source>
        <translation>%1 层 · d_model %2 · %3 个注意力头 · 词表 %4 · 序列 %5（%6 参数）</translation>
    </message>
    <message>
        <source>Bare parameter count: one flat buffer, no per-unit padding</source>
        <translation>仅参数量：单个扁平缓冲区，无逐单元填充</translation>
    </message>
</context>
<context>
    <name>shardscope::widgets::CalculatorPage</name>
    <message>
        <source>Invalid input: %1</source>
        <translation>输入无效：%1</translation>
    </message>
    <message>
        <source>Recomputed in %1 ms</source>
        <translation>已重新计算，用时 %1 ms</translation>
    </message>
    <message>
        <source>Input is invalid; showing the last valid result</source>
        <translation>输入无效；显示上一次有效结果</translation>
    </message>
    <message>
        <source>Scenario</source>
        <translation>场景</translation>
    </message>
    <message>
        <source>&lt;b&gt;%1&lt;/b&gt; at N = %2</source>
        <translation>&lt;b&gt;%1&lt;/b&gt;，N = %2</translation>
    </message>
    <message>
        <source>Ψ = %1 parameters (padded: %2)</source>
        <translation>Ψ = %1 个参数（填充后：%2）</translation>
    </message>
    <message>
        <source>Model states per rank: &lt;b&gt;%1&lt;/b&gt; on device, %2 on host, %3 on NVMe</source>
        <translation>每个 rank 的模型状态：设备 &lt;b&gt;%1&lt;/b&gt;，主机内存 %2，NVMe %3</translation>
    </message>
    <message>
        <source>Predicted device peak: %1</source>
        <translation>预测设备峰值：%1</translation>
    </message>
    <message>
        <source>Communication per rank per step: &lt;b&gt;%1&lt;/b&gt; sent (≈ %2 Ψ)</source>
        <translation>每个 rank 每步通信量：发送 &lt;b&gt;%1&lt;/b&gt;（≈ %2 Ψ）</translation>
    </message>
    <message>
        <source>%1: %2 sent in %3 calls</source>
        <translation>%1：%3 次调用共发送 %2</translation>
    </message>
</context>
<context>
    <name>shardscope::widgets::CategoryBarChart</name>
    <message>
        <source>Device bytes per rank by category at N = %1</source>
        <translation>N = %1 时每个 rank 各类别的设备内存</translation>
    </message>
    <message>
        <source>Device bytes per rank by category</source>
        <translation>每个 rank 各类别的设备内存</translation>
    </message>
    <message>
        <source>Per rank (%1)</source>
        <translation>每个 rank（%1）</translation>
    </message>
    <message>
        <source>n/a</source>
        <translation>不适用</translation>
    </message>
</context>
<context>
    <name>shardscope::widgets::DeepSpeedPanel</name>
    <message>
        <source>DeepSpeed&apos;s estimator vs. ShardScope</source>
        <translation>DeepSpeed 估算器与 ShardScope 对比</translation>
    </message>
    <message>
        <source>GPUs per node</source>
        <translation>每节点 GPU 数</translation>
    </message>
    <message>
        <source>Nodes</source>
        <translation>节点数</translation>
    </message>
    <message>
        <source>Offload</source>
        <translation>卸载</translation>
    </message>
    <message>
        <source>estimate_zero3_model_states_mem_needs_all_live</source>
        <translation>estimate_zero3_model_states_mem_needs_all_live</translation>
    </message>
    <message>
        <source>estimate_zero2_model_states_mem_needs_all_live</source>
        <translation>estimate_zero2_model_states_mem_needs_all_live</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>Why they differ: DeepSpeed budgets 18 B/param for ZeRO-3 (16 B of Adam states plus a 2 B fp16 gradient partition), adds 4 B × the largest layer on every GPU for the gathered layer, and multiplies every CPU figure by additional_buffer_factor = 1.5; ShardScope counts the bytes this implementation keeps between steps (padded shards, K = 12) and reports gathered units and buckets in the peak, not in model states.</source>
        <translation>差异原因：DeepSpeed 为 ZeRO-3 按每参数 18 B 估算（16 B 的 Adam 状态加 2 B 的 fp16 梯度分片），在每个 GPU 上为 all-gather 后的层额外计入 4 B × 最大层参数量，并把所有 CPU 数字乘以 additional_buffer_factor = 1.5；ShardScope 只统计本实现在两步之间保留的字节（含填充的分片，K = 12），并把 all-gather 的单元和通信桶计入峰值，而不计入模型状态。</translation>
    </message>
    <message>
        <source>Why they differ: DeepSpeed&apos;s ZeRO-2 estimate keeps fp16 params and gradients whole on the GPU (4 B/param) plus 16 B/param of partitioned optimizer state and fp32 gradients, and multiplies every CPU figure by additional_buffer_factor = 1.5 (with ≥ 16 B/param on the host under offload); ShardScope counts only what this implementation keeps between steps, shard by shard.</source>
        <translation>差异原因：DeepSpeed 的 ZeRO-2 估算在 GPU 上保留完整的 fp16 参数和梯度（每参数 4 B），外加每参数 16 B 的分片优化器状态与 fp32 梯度，并把所有 CPU 数字乘以 additional_buffer_factor = 1.5（卸载时主机内存每参数至少 16 B）；ShardScope 只逐分片统计本实现在两步之间保留的内容。</translation>
    </message>
    <message>
        <source>Init</source>
        <translation>Init</translation>
    </message>
    <message>
        <source>DS
GPU</source>
        <translation>DS
GPU</translation>
    </message>
    <message>
        <source>ours
GPU</source>
        <translation>本工具
GPU</translation>
    </message>
    <message>
        <source>DS
CPU/node</source>
        <translation>DS
CPU/节点</translation>
    </message>
    <message>
        <source>ours
CPU/node</source>
        <translation>本工具
CPU/节点</translation>
    </message>
    <message>
        <source>zero.Init: parameters are created already partitioned</source>
        <translation>zero.Init：参数在创建时即已分片</translation>
    </message>
    <message>
        <source>Ψ = %1 on %2 GPUs; largest layer: %3. DS = DeepSpeed, ours = ShardScope (fp16 mixed Adam, %2 ranks). All figures in GB (10⁹ B).</source>
        <translation>Ψ = %1，共 %2 个 GPU；最大层：%3。DS = DeepSpeed，本工具 = ShardScope（fp16 混合精度 Adam，%2 个 rank）。所有数字单位为 GB（10⁹ B）。</translation>
    </message>
    <message>
        <source>%1 params</source>
        <translation>%1 参数</translation>
    </message>
    <message>
        <source>0 (a bare count has no layers)</source>
        <translation>0（仅参数量时没有层信息）</translation>
    </message>
    <message>
        <source>param + optim.</source>
        <translation>参数 + 优化器</translation>
    </message>
    <message>
        <source>optim.</source>
        <translation>优化器</translation>
    </message>
</context>
<context>
    <name>shardscope::widgets::DerivationModel</name>
    <message>
        <source>Total model states</source>
        <translation>模型状态合计</translation>
    </message>
    <message>
        <source>all tiers</source>
        <translation>所有层级</translation>
    </message>
    <message>
        <source>Category</source>
        <translation>类别</translation>
    </message>
    <message>
        <source>Tier</source>
        <translation>存储层级</translation>
    </message>
    <message>
        <source>Formula</source>
        <translation>公式</translation>
    </message>
    <message>
        <source>Source</source>
        <translation>来源</translation>
    </message>
    <message>
        <source>Bytes</source>
        <translation>字节</translation>
    </message>
    <message>
        <source>GB (10⁹ B)</source>
        <translation>GB (10⁹ B)</translation>
    </message>
    <message>
        <source>GiB (2³⁰ B)</source>
        <translation>GiB (2³⁰ B)</translation>
    </message>
</context>
<context>
    <name>shardscope::widgets::MainWindow</name>
    <message>
        <source>ShardScope — ZeRO and FSDP, executed and explained</source>
        <translation>ShardScope — ZeRO 与 FSDP：真实执行，逐项解释</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>视图(&amp;V)</translation>
    </message>
    <message>
        <source>&amp;Language</source>
        <translation>语言(&amp;L)</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>帮助(&amp;H)</translation>
    </message>
    <message>
        <source>&amp;About ShardScope</source>
        <translation>关于 ShardScope(&amp;A)</translation>
    </message>
    <message>
        <source>ShardScope %1</source>
        <translation>ShardScope %1</translation>
    </message>
    <message>
        <source>About ShardScope</source>
        <translation>关于 ShardScope</translation>
    </message>
    <message>
        <source>&lt;h3&gt;ShardScope %1&lt;/h3&gt;&lt;p&gt;A desktop explorer for ZeRO and FSDP: what every rank holds (parameters, gradients, optimizer state, activations, communication buffers), measured from real sharded training steps and compared with the theory.&lt;/p&gt;</source>
        <translation>&lt;h3&gt;ShardScope %1&lt;/h3&gt;&lt;p&gt;ZeRO 与 FSDP 的桌面探索工具：展示每个 rank 持有的内容（参数、梯度、优化器状态、激活值、通信缓冲区），数据来自真实的分片训练步骤，并与理论值对照。&lt;/p&gt;</translation>
    </message>
    <message>
        <source>Calculator</source>
        <translation>计算器</translation>
    </message>
</context>
<context>
    <name>shardscope::widgets::ScalingChart</name>
    <message>
        <source>Model states per rank on the device vs. N</source>
        <translation>每个 rank 设备上的模型状态随 N 的变化</translation>
    </message>
    <message>
        <source>Ranks N (log scale)</source>
        <translation>Rank 数 N（对数坐标）</translation>
    </message>
    <message>
        <source>Bytes per rank (GB = 10⁹)</source>
        <translation>每个 rank 的字节数（GB = 10⁹）</translation>
    </message>
    <message>
        <source>DDP: %1 B/param</source>
        <translation>DDP：每参数 %1 B</translation>
    </message>
    <message>
        <source>ZeRO-1 → %1× limit</source>
        <translation>ZeRO-1 → %1× 极限</translation>
    </message>
    <message>
        <source>ZeRO-2 → %1× limit</source>
        <translation>ZeRO-2 → %1× 极限</translation>
    </message>
    <message>
        <source>ZeRO-3 → N× (DDP / N)</source>
        <translation>ZeRO-3 → N×（DDP / N）</translation>
    </message>
    <message>
        <source>N = %1: %2</source>
        <translation>N = %1：%2</translation>
    </message>
</context>
</TS>
