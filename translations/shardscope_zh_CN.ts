<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>BatchCapture</name>
    <message>
        <source>the default run produced %1 of %2 steps within %3 s</source>
        <translation>默认运行在 %3 秒内只完成了 %2 步中的 %1 步</translation>
    </message>
    <message>
        <source>cannot open %1</source>
        <translation>无法打开 %1</translation>
    </message>
    <message>
        <source>reading %1 took longer than %2 s</source>
        <translation>读取 %1 超过了 %2 秒</translation>
    </message>
    <message>
        <source>%1 holds no steps</source>
        <translation>%1 中没有任何训练步</translation>
    </message>
</context>
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
    <message>
        <source>Tensor parallelism needs a model shape (a preset): it splits the heads and the MLP.</source>
        <translation>张量并行需要模型结构（一个预设）：它会切分注意力头和 MLP。</translation>
    </message>
    <message>
        <source>T = %1 does not divide N = %2: the ranks form a T × D mesh.</source>
        <translation>T = %1 不能整除 N = %2：各 rank 组成 T × D 网格。</translation>
    </message>
    <message>
        <source>Hybrid shard group size %1 does not divide the data-parallel ranks D = N / T = %2: every replica group needs the same number of ranks.</source>
        <translation>混合分片组大小 %1 不能整除数据并行 rank 数 D = N / T = %2：每个副本组必须包含相同数量的 rank。</translation>
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
    <name>ChartExport</name>
    <message>
        <source>nothing to export: the view has no size</source>
        <translation>没有可导出的内容：该视图尺寸为零</translation>
    </message>
    <message>
        <source>cannot write %1: %2</source>
        <translation>无法写入 %1：%2</translation>
    </message>
    <message>
        <source>cannot encode %1 as PNG</source>
        <translation>无法将 %1 编码为 PNG</translation>
    </message>
    <message>
        <source>cannot start an SVG document for %1</source>
        <translation>无法为 %1 创建 SVG 文档</translation>
    </message>
    <message>
        <source>cannot start a PDF document for %1</source>
        <translation>无法为 %1 创建 PDF 文档</translation>
    </message>
    <message>
        <source>PNG image (*.png)</source>
        <translation>PNG 图像 (*.png)</translation>
    </message>
    <message>
        <source>SVG drawing (*.svg)</source>
        <translation>SVG 矢量图 (*.svg)</translation>
    </message>
    <message>
        <source>PDF document (*.pdf)</source>
        <translation>PDF 文档 (*.pdf)</translation>
    </message>
    <message>
        <source>%1: use a .png, .svg or .pdf file name</source>
        <translation>%1：请使用 .png、.svg 或 .pdf 文件名</translation>
    </message>
    <message>
        <source>cannot paint %1</source>
        <translation>无法绘制 %1</translation>
    </message>
</context>
<context>
    <name>Explain</name>
    <message>
        <source>No events yet: start a run or open a recording.</source>
        <translation>尚无事件：请开始运行或打开录制文件。</translation>
    </message>
    <message>
        <source>The run has not started yet: press Play or step forward.</source>
        <translation>运行尚未开始：请点击“播放”或向前单步。</translation>
    </message>
    <message>
        <source>the model</source>
        <translation>整个模型</translation>
    </message>
    <message>
        <source>Rank %1 begins step %2.</source>
        <translation>rank %1 开始第 %2 步。</translation>
    </message>
    <message>
        <source>Rank %1 finishes step %2.</source>
        <translation>rank %1 完成第 %2 步。</translation>
    </message>
    <message>
        <source>Rank %1 all-gathers %2: %3 shards of %4 become %5 of full parameters, freed after its %6.</source>
        <translation>rank %1 对 %2 执行 all-gather：%3 个 %4 的分片合成 %5 的完整参数，在其%6计算后释放。</translation>
    </message>
    <message>
        <source>Rank %1 all-gathers %2: %3 shards of %4 become %5 of full parameters.</source>
        <translation>rank %1 对 %2 执行 all-gather：%3 个 %4 的分片合成 %5 的完整参数。</translation>
    </message>
    <message>
        <source>Rank %1 reduce-scatters %2&apos;s gradients: %3 ranks&apos; %4 gradients are summed chunk by chunk, and each rank keeps its %5 shard.</source>
        <translation>rank %1 对 %2 的梯度执行 reduce-scatter：%3 个 rank 各自 %4 的梯度逐块求和，每个 rank 保留属于自己的 %5 分片。</translation>
    </message>
    <message>
        <source>Rank %1 all-reduces %2 with the other %3 ranks: the gradient norm every rank needs to clip alike.</source>
        <translation>rank %1 与其他 %3 个 rank 对 %2 执行 all-reduce：这是每个 rank 以相同方式裁剪梯度所需的梯度范数。</translation>
    </message>
    <message>
        <source>Rank %1 all-reduces %2&apos;s gradients (%3): every rank ends with the same sum.</source>
        <translation>rank %1 对 %2 的梯度（%3）执行 all-reduce：每个 rank 最终得到相同的总和。</translation>
    </message>
    <message>
        <source>Rank %1 takes part in a broadcast of %2.</source>
        <translation>rank %1 参与一次 %2 的广播。</translation>
    </message>
    <message>
        <source>Rank %1 holds %2&apos;s full parameters (%3): the unit is unsharded.</source>
        <translation>rank %1 持有 %2 的完整参数（%3）：该单元已完成收集（unshard）。</translation>
    </message>
    <message>
        <source>Rank %1 holds its summed shard of %2&apos;s gradient (%3 of %4).</source>
        <translation>rank %1 持有 %2 梯度中属于自己的已求和分片（%4 中的 %3）。</translation>
    </message>
    <message>
        <source>Rank %1 has the all-reduced value, the same on every rank.</source>
        <translation>rank %1 已得到 all-reduce 后的值，所有 rank 上都相同。</translation>
    </message>
    <message>
        <source>Rank %1 has the summed gradients of %2 (%3), identical on every rank.</source>
        <translation>rank %1 已得到 %2 的梯度总和（%3），所有 rank 上完全相同。</translation>
    </message>
    <message>
        <source>Rank %1 has received the broadcast (%2).</source>
        <translation>rank %1 已收到广播（%2）。</translation>
    </message>
    <message>
        <source>Rank %1 allocates %2 for %3&apos;s parameters: a full replica, as DDP keeps on every rank.</source>
        <translation>rank %1 为 %3 的参数分配 %2：一份完整副本，DDP 在每个 rank 上都保存一份。</translation>
    </message>
    <message>
        <source>Rank %1 allocates %2 for %3&apos;s full parameters, ready to unshard.</source>
        <translation>rank %1 为 %3 的完整参数分配 %2，准备收集（unshard）。</translation>
    </message>
    <message>
        <source>Rank %1 allocates its %2 shard of %3&apos;s parameters: 1/%4 of the unit.</source>
        <translation>rank %1 分配 %3 参数中属于自己的 %2 分片：该单元的 1/%4。</translation>
    </message>
    <message>
        <source>Rank %1 allocates %2 to hold %3&apos;s full gradient.</source>
        <translation>rank %1 分配 %2 来存放 %3 的完整梯度。</translation>
    </message>
    <message>
        <source>Rank %1 allocates %2 for its shard of %3&apos;s gradient.</source>
        <translation>rank %1 为 %3 梯度中属于自己的分片分配 %2。</translation>
    </message>
    <message>
        <source>Rank %1 allocates %2 of optimizer state (%3) for %4.</source>
        <translation>rank %1 为 %4 分配 %2 的优化器状态（%3）。</translation>
    </message>
    <message>
        <source>Rank %1 keeps %2 of %3&apos;s activations for the backward pass.</source>
        <translation>rank %1 为反向传播保留 %3 的 %2 激活值。</translation>
    </message>
    <message>
        <source>Rank %1 allocates a %2 communication buffer.</source>
        <translation>rank %1 分配一个 %2 的通信缓冲区。</translation>
    </message>
    <message>
        <source>Rank %1 allocates %2 of temporary workspace for %3.</source>
        <translation>rank %1 为 %3 分配 %2 的临时工作区。</translation>
    </message>
    <message>
        <source>Rank %1 frees %2 of %3&apos;s parameters.</source>
        <translation>rank %1 释放 %3 的 %2 参数。</translation>
    </message>
    <message>
        <source>Rank %1 reshards %2: it frees %3 of full parameters and keeps only its %4 shard.</source>
        <translation>rank %1 对 %2 重新分片（reshard）：释放 %3 的完整参数，只保留自己的 %4 分片。</translation>
    </message>
    <message>
        <source>Rank %1 frees %2&apos;s full gradient (%3); only its shard remains.</source>
        <translation>rank %1 释放 %2 的完整梯度（%3）；只剩下自己的分片。</translation>
    </message>
    <message>
        <source>Rank %1 frees %2 of %3&apos;s activations: the backward pass has used them.</source>
        <translation>rank %1 释放 %3 的 %2 激活值：反向传播已经用完它们。</translation>
    </message>
    <message>
        <source>Rank %1 frees %2 of temporary workspace.</source>
        <translation>rank %1 释放 %2 的临时工作区。</translation>
    </message>
    <message>
        <source>Rank %1 frees %2 of %3 (%4).</source>
        <translation>rank %1 释放 %2 的%3（%4）。</translation>
    </message>
    <message>
        <source>Rank %1 runs %2&apos;s forward on its own copy of the parameters.</source>
        <translation>rank %1 用自己的参数副本运行 %2 的前向计算。</translation>
    </message>
    <message>
        <source>Rank %1 runs %2&apos;s forward on the gathered full parameters.</source>
        <translation>rank %1 用收集到的完整参数运行 %2 的前向计算。</translation>
    </message>
    <message>
        <source>Rank %1 runs %2&apos;s backward: gradients for its parameters and its input.</source>
        <translation>rank %1 运行 %2 的反向计算：求其参数和输入的梯度。</translation>
    </message>
    <message>
        <source>Rank %1 recomputes %2&apos;s forward activations (activation checkpointing trades this compute for memory).</source>
        <translation>rank %1 重新计算 %2 的前向激活值（激活检查点用这部分计算换取内存）。</translation>
    </message>
    <message>
        <source>Rank %1 updates all parameters with AdamW, as every other rank does.</source>
        <translation>rank %1 用 AdamW 更新全部参数，其他每个 rank 也都这样做。</translation>
    </message>
    <message>
        <source>Rank %1 updates only its shard of the parameters with AdamW: its optimizer state covers 1/%2 of the model.</source>
        <translation>rank %1 用 AdamW 只更新自己的参数分片：它的优化器状态只覆盖模型的 1/%2。</translation>
    </message>
    <message>
        <source>Rank %1 starts computing.</source>
        <translation>rank %1 开始计算。</translation>
    </message>
    <message>
        <source>Rank %1 finishes the optimizer step.</source>
        <translation>rank %1 完成优化器步骤。</translation>
    </message>
    <message>
        <source>Rank %1 finishes %2&apos;s %3.</source>
        <translation>rank %1 完成 %2 的%3计算。</translation>
    </message>
    <message>
        <source>Rank %1: %2.</source>
        <translation>rank %1：%2。</translation>
    </message>
    <message>
        <source>Rank %1 has not logged an event yet at this point of the replay.</source>
        <translation>rank %1 在回放的这个位置还没有记录任何事件。</translation>
    </message>
    <message>
        <source>Rank %1 all-reduces a bucket of several units&apos; gradients (%2): every rank ends with the same sum.</source>
        <translation>rank %1 对一个包含多个单元梯度的桶（%2）执行 all-reduce：每个 rank 最终得到相同的总和。</translation>
    </message>
    <message>
        <source>Rank %1 holds the full activation of %2 (%3), the same on every rank of its tensor-parallel group.</source>
        <translation>rank %1 持有 %2 的完整激活值（%3），在其张量并行组的每个 rank 上都相同。</translation>
    </message>
    <message>
        <source>Rank %1 writes its part of the checkpoint: only the elements it owns (replicated state split over its holders), no padding.</source>
        <translation>rank %1 写入检查点中属于自己的部分：只写它拥有的元素（复制的状态在各持有者之间拆分），不含填充。</translation>
    </message>
    <message>
        <source>Rank %1 has written and synced its checkpoint file (%2).</source>
        <translation>rank %1 已写入并同步了自己的检查点文件（%2）。</translation>
    </message>
    <message>
        <source>Rank %1 frees %2 of %3 (%4) in %5.</source>
        <translation>rank %1 释放%5中 %2 的%3（%4）。</translation>
    </message>
    <message>
        <source>Rank %1 places %2 of %3 for %4 in its NVMe file (ZeRO-Infinity): it is read back through host staging buffers when the update needs it, so neither device nor host memory holds it between steps.</source>
        <translation>rank %1 把 %4 的%3（%2）放入自己的 NVMe 文件（ZeRO-Infinity）：更新需要时经主机中转缓冲区读回，因此两步之间设备内存和主机内存都不保存它。</translation>
    </message>
    <message>
        <source>Rank %1 keeps %2 of %3 for %4 in host memory (ZeRO-Offload): the CPU runs its AdamW update, and the device&apos;s capacity does not count these bytes.</source>
        <translation>rank %1 把 %4 的%3（%2）保存在主机内存中（ZeRO-Offload）：由 CPU 执行其 AdamW 更新，这些字节不计入设备容量。</translation>
    </message>
    <message>
        <source>Rank %1 allocates %2 in host memory for its shard of %3&apos;s gradient: it is copied there from the device after the reduce-scatter, for the CPU&apos;s optimizer step.</source>
        <translation>rank %1 在主机内存中为 %3 梯度中属于自己的分片分配 %2：reduce-scatter 之后从设备复制到这里，供 CPU 执行优化器步骤。</translation>
    </message>
    <message>
        <source>Rank %1 keeps its %2 shard of %3&apos;s parameters in host memory: it is copied to the device before each all-gather.</source>
        <translation>rank %1 把 %3 参数中属于自己的 %2 分片保存在主机内存中：每次 all-gather 之前将其复制到设备。</translation>
    </message>
    <message>
        <source>Rank %1 allocates %2 of host staging (%3) for %4: copies between device, host and NVMe pass through it.</source>
        <translation>rank %1 为 %4 分配 %2 的主机中转缓冲区（%3）：设备、主机内存和 NVMe 之间的复制都经过它。</translation>
    </message>
    <message>
        <source>Rank %1 waits for the %2 of %3: the CPU optimizer needs that state now and the transfer is not done — this wait is exposed transfer time.</source>
        <translation>rank %1 等待 %3 的%2：CPU 优化器现在就需要该状态，而传输尚未完成——这段等待就是暴露传输时间。</translation>
    </message>
    <message>
        <source>Rank %1 sees the %2 of %3 (%4) complete.</source>
        <translation>rank %1 确认 %3 的%2（%4）已完成。</translation>
    </message>
    <message>
        <source>Rank %1 sees the %2 of %3 (%4) complete, at %5 GB/s.</source>
        <translation>rank %1 确认 %3 的%2（%4）已完成，速率 %5 GB/s。</translation>
    </message>
    <message>
        <source>Rank %1 copies its slice of %2&apos;s all-reduced gradient (%3) device → host: the optimizer runs on the CPU, where the master weights and Adam&apos;s m and v live.</source>
        <translation>rank %1 复制 %2 经 all-reduce 的梯度中属于自己的切片（%3），设备 → 主机：优化器在 CPU 上运行，主权重和 Adam 的 m、v 都在那里。</translation>
    </message>
    <message>
        <source>Rank %1 copies its reduced gradient shard of %2 (%3) device → host: its reduce-scatter is done, and the optimizer runs on the CPU, where the master weights and Adam&apos;s m and v live.</source>
        <translation>rank %1 复制 %2 中属于自己的已规约梯度分片（%3），设备 → 主机：它的 reduce-scatter 已完成，优化器在 CPU 上运行，主权重和 Adam 的 m、v 都在那里。</translation>
    </message>
    <message>
        <source>Rank %1 brings its parameter shard of %2 (%3) host → device: the shard lives in host memory, and the all-gather that unshards the unit reads device memory.</source>
        <translation>rank %1 传送 %2 中属于自己的参数分片（%3），主机 → 设备：该分片存放在主机内存中，而收集该单元的 all-gather 读取的是设备内存。</translation>
    </message>
    <message>
        <source>Rank %1 sends %2&apos;s updated weights (%3, bf16) host → device: the CPU optimizer has updated the master copy, and the next forward computes with these.</source>
        <translation>rank %1 发送 %2 更新后的权重（%3，bf16），主机 → 设备：CPU 优化器已更新主权重副本，下一次前向计算将使用这些权重。</translation>
    </message>
    <message>
        <source>Rank %1 starts reading %2&apos;s optimizer state (master, m, v: %3) from NVMe; the read is in flight while %4 updates on the CPU.</source>
        <translation>rank %1 开始从 NVMe 读取 %2 的优化器状态（主权重、m、v：%3）；%4 在 CPU 上更新期间，该读取正在进行。</translation>
    </message>
    <message>
        <source>Rank %1 starts reading %2&apos;s optimizer state (master, m, v: %3) from NVMe; the first unit has nothing to overlap with, so the rank waits for it.</source>
        <translation>rank %1 开始从 NVMe 读取 %2 的优化器状态（主权重、m、v：%3）；第一个单元没有可与之重叠的计算，因此该 rank 要等待读取完成。</translation>
    </message>
    <message>
        <source>Rank %1 writes %2&apos;s initial optimizer state (%3) to its NVMe file.</source>
        <translation>rank %1 将 %2 的初始优化器状态（%3）写入自己的 NVMe 文件。</translation>
    </message>
    <message>
        <source>Rank %1 writes %2&apos;s updated optimizer state (%3) back to NVMe; the write drains while the next unit updates.</source>
        <translation>rank %1 将 %2 更新后的优化器状态（%3）写回 NVMe；写入在下一个单元更新期间逐步完成。</translation>
    </message>
    <message>
        <source>Rank %1 moves %2 of %3 between tiers.</source>
        <translation>rank %1 在层级之间移动 %2 的%3。</translation>
    </message>
    <message>
        <source>Rank %1 all-gathers its TP slice of %2 with rank(s) %3 of its data-parallel group: %4 shards of %5 become %6 of full parameters (ZeRO splits the storage; every rank then computes the whole slice).</source>
        <translation>rank %1 与其数据并行组中的 rank %3 对 %2 的 TP 切片执行 all-gather：%4 个 %5 的分片合成 %6 的完整参数（ZeRO 切分存储；之后每个 rank 计算整个切片）。</translation>
    </message>
    <message>
        <source>its tensor-parallel group</source>
        <translation>其张量并行组</translation>
    </message>
    <message>
        <source>rank(s) %1 of its tensor-parallel group</source>
        <translation>其张量并行组中的 rank %1</translation>
    </message>
    <message>
        <source>Rank %1 all-reduces %2 of %3&apos;s partial input gradients with %4: each computed them from its own heads / MLP columns only, so they are summed (TP splits the computation, on the critical path).</source>
        <translation>rank %1 与%4对 %3 的 %2 部分输入梯度执行 all-reduce：每个 rank 只用自己的注意力头 / MLP 列计算了这些梯度，因此需要求和（TP 切分计算，位于关键路径上）。</translation>
    </message>
    <message>
        <source>Rank %1 all-reduces %2 of %3&apos;s partial activations with %4: each computed the output from its own heads / MLP columns only, so they are summed (TP splits the computation, on the critical path).</source>
        <translation>rank %1 与%4对 %3 的 %2 部分激活值执行 all-reduce：每个 rank 只用自己的注意力头 / MLP 列计算了输出，因此需要求和（TP 切分计算，位于关键路径上）。</translation>
    </message>
    <message>
        <source>Padding moves with N: %1&apos;s flat buffer of %2 elements is padded to a multiple of the shard count so every shard has the same size — %3 padding element(s) at N = %4, %5 at M = %6. A checkpoint stores element ranges of the unpadded unit and never the padding, so it loads at any N.</source>
        <translation>填充量随 N 变化：%1 的扁平缓冲区有 %2 个元素，会填充到分片数的整数倍，使每个分片大小相同——N = %4 时填充 %3 个元素，M = %6 时填充 %5 个。检查点保存的是未填充单元的元素范围，从不保存填充，因此可以在任意 N 下加载。</translation>
    </message>
    <message numerus="yes">
        <source>Resharding at load: each of the M = %1 new ranks computes the element ranges of its new shard and reads, from the N = %2 saved files, only the byte ranges that overlap them — element ranges are mapped, padded bytes never are. New rank %3 makes %n read(s) from %4 file(s), %5 in all.</source>
        <translation>
            <numerusform>加载时重新分片：M = %1 个新 rank 各自计算自己新分片的元素范围，并从 N = %2 个已保存文件中只读取与之重叠的字节范围——映射的是元素范围，填充字节从不映射。新 rank %3 从 %4 个文件读取 %n 次，共 %5。</numerusform>
        </translation>
    </message>
    <message>
        <source>Rank %1 sends the gradient of its stage&apos;s input (%2, after %3) to the previous pipeline stage.</source>
        <translation>rank %1 把本阶段输入的梯度（%2，%3 之后）发送给上一个流水线阶段。</translation>
    </message>
    <message>
        <source>Rank %1 sends its stage&apos;s output (%2, from %3) to the next pipeline stage.</source>
        <translation>rank %1 把本阶段的输出（%2，来自 %3）发送给下一个流水线阶段。</translation>
    </message>
    <message>
        <source>Rank %1 waits for %2 from its neighbouring pipeline stage: until it arrives, this stage idles (the bubble).</source>
        <translation>rank %1 等待相邻流水线阶段发来的 %2：在它到达之前，本阶段空闲（即气泡）。</translation>
    </message>
    <message>
        <source>Rank %1 has posted the message (%2); it computes on while its neighbour copies it.</source>
        <translation>rank %1 已发出消息（%2）；相邻阶段复制它的同时，本 rank 继续计算。</translation>
    </message>
    <message>
        <source>Rank %1 has received %2 from its neighbouring stage.</source>
        <translation>rank %1 已从相邻阶段收到 %2。</translation>
    </message>
    <message>
        <source>Rank %1 runs %2&apos;s backward for its input only: the gradient the previous stage waits for. Its weight gradients come later (W).</source>
        <translation>rank %1 只为 %2 的输入运行反向计算：这是前一阶段正在等待的梯度。它的权重梯度稍后计算（W）。</translation>
    </message>
    <message>
        <source>Rank %1 computes %2&apos;s weight gradients (W), deferred from its backward: no stage waits for them, so the zero-bubble schedule runs them where the pipeline would idle.</source>
        <translation>rank %1 计算 %2 的权重梯度（W），它们从反向计算中推迟而来：没有阶段在等待它们，因此零气泡调度把它们放在流水线原本空闲的时候执行。</translation>
    </message>
    <message>
        <source>Rank %1 keeps %2&apos;s output gradient for later: the embedding has no input gradient, all of its backward is weight gradients (W).</source>
        <translation>rank %1 先保留 %2 的输出梯度：嵌入层没有输入梯度，它的反向计算全部是权重梯度（W）。</translation>
    </message>
    <message>
        <source>Rank %1 runs %2&apos;s backward for its input only; its weight gradients come later (W).</source>
        <translation>rank %1 只为 %2 的输入运行反向计算；它的权重梯度稍后计算（W）。</translation>
    </message>
</context>
<context>
    <name>FailureText</name>
    <message>
        <source>the %1 of %2</source>
        <translation>%2 的 %1</translation>
    </message>
    <message>
        <source>barrier</source>
        <translation>屏障</translation>
    </message>
    <message>
        <source>out of %5 memory on rank %1: %2 of %3 for %4 do not fit under its capacity of %6 (%7 live)</source>
        <translation>rank %1 的%5内存不足：%4 的 %2 %3放不下，容量为 %6（已占用 %7）</translation>
    </message>
    <message>
        <source>the %1 on rank %2 waited %3 s for its peers and timed out</source>
        <translation>rank %2 上的 %1 等待其他 rank %3 秒后超时</translation>
    </message>
    <message>
        <source>rank %1: the %2 waited %3 ms for rank(s) %4 and timed out</source>
        <translation>rank %1：%2 等待 rank %4 %3 毫秒后超时</translation>
    </message>
    <message>
        <source>rank %1: the %2 can never complete: rank %3 has left the group</source>
        <translation>rank %1：%2 永远无法完成：rank %3 已离开通信组</translation>
    </message>
    <message>
        <source>rank %1 left the group while its peers waited in a collective</source>
        <translation>rank %1 在其他 rank 等待集合通信时离开了通信组</translation>
    </message>
    <message>
        <source>it did not arrive at the %1 (rank %2 waited %3 ms)</source>
        <translation>它没有到达 %1（rank %2 等待了 %3 毫秒）</translation>
    </message>
    <message>
        <source>it stopped inside %1</source>
        <translation>它停在了 %1 内部</translation>
    </message>
    <message>
        <source>it did not arrive at %1</source>
        <translation>它没有到达 %1</translation>
    </message>
    <message>
        <source> (nor did rank(s) %1)</source>
        <translation>（rank %1 也没有）</translation>
    </message>
    <message>
        <source>interrupted by %1 after step %2</source>
        <translation>在第 %2 步之后被 %1 中断</translation>
    </message>
    <message>
        <source>interrupted by %1</source>
        <translation>被 %1 中断</translation>
    </message>
    <message>
        <source>terminated by %1 from outside (sent to mpirun)</source>
        <translation>被外部的 %1 终止（发给 mpirun）</translation>
    </message>
    <message>
        <source>its process is stopped (SIGSTOP)</source>
        <translation>它的进程已暂停（SIGSTOP）</translation>
    </message>
    <message>
        <source>stopped</source>
        <translation>已停止</translation>
    </message>
    <message>
        <source>no unit in particular</source>
        <translation>不属于特定单元</translation>
    </message>
    <message>
        <source>unit %1</source>
        <translation>单元 %1</translation>
    </message>
    <message>
        <source>no progress for %1 s: %2</source>
        <translation>%1 秒没有进展：%2</translation>
    </message>
    <message>
        <source>a rank is stuck</source>
        <translation>有 rank 卡住了</translation>
    </message>
    <message>
        <source>mpirun is stopped (SIGSTOP)</source>
        <translation>mpirun 已暂停（SIGSTOP）</translation>
    </message>
    <message>
        <source>the worker process holding every rank thread is stopped (SIGSTOP)</source>
        <translation>承载所有 rank 线程的 worker 进程已暂停（SIGSTOP）</translation>
    </message>
</context>
<context>
    <name>Glossary</name>
    <message>
        <source>unit</source>
        <translation>单元</translation>
    </message>
    <message>
        <source>A sharding unit: the group of parameters gathered and freed together (FSDP: one wrapped module&apos;s flat parameter; here the embedding, each transformer block and the head). Its flat buffer is padded to a multiple of the rank count so every shard has the same size.</source>
        <translation>分片单元：一起收集、一起释放的一组参数（FSDP 中是一个被包装模块的扁平参数；这里是嵌入层、每个 Transformer 块和输出头）。它的扁平缓冲区会填充到 rank 数的整数倍，使每个分片大小相同。</translation>
    </message>
    <message>
        <source>shard</source>
        <translation>分片</translation>
    </message>
    <message>
        <source>A rank&apos;s 1/N slice of a unit&apos;s flat buffer. Sharded strategies keep only shards between uses.</source>
        <translation>一个 rank 持有的单元扁平缓冲区的 1/N。分片策略在两次使用之间只保留分片。</translation>
    </message>
    <message>
        <source>unshard (all-gather)</source>
        <translation>收集（unshard，all-gather）</translation>
    </message>
    <message>
        <source>all-gather</source>
        <translation>all-gather</translation>
    </message>
    <message>
        <source>unshard</source>
        <translation>收集</translation>
    </message>
    <message>
        <source>Every rank sends its shard to every other rank, so all ranks end with the full unit: N shards of S bytes become N × S bytes on each rank. Each rank sends (N−1)/N of the full size.</source>
        <translation>每个 rank 把自己的分片发给其他所有 rank，于是所有 rank 都得到完整单元：N 个 S 字节的分片在每个 rank 上变成 N × S 字节。每个 rank 发送完整大小的 (N−1)/N。</translation>
    </message>
    <message>
        <source>reshard</source>
        <translation>重新分片</translation>
    </message>
    <message>
        <source>Freeing a unit&apos;s gathered full parameters after use, keeping only the shard. This is what keeps ZeRO-3 / FSDP memory at 1/N of the model plus the units in flight.</source>
        <translation>用完后释放单元收集来的完整参数，只保留分片。正因如此，ZeRO-3 / FSDP 的内存才能保持在模型的 1/N 加上正在使用的单元。</translation>
    </message>
    <message>
        <source>reduce-scatter</source>
        <translation>reduce-scatter</translation>
    </message>
    <message>
        <source>Each rank&apos;s full gradient is cut into N chunks; chunk j is summed over all ranks and lands on rank j, which keeps it as its gradient shard. Half the traffic of an all-reduce.</source>
        <translation>每个 rank 的完整梯度被切成 N 块；第 j 块在所有 rank 上求和后落到 rank j，作为它的梯度分片保存。通信量是 all-reduce 的一半。</translation>
    </message>
    <message>
        <source>all-reduce</source>
        <translation>all-reduce</translation>
    </message>
    <message>
        <source>Every rank ends with the sum of all ranks&apos; buffers (DDP&apos;s gradient synchronisation). A ring sends 2(N−1)/N of the buffer per rank: a reduce-scatter followed by an all-gather.</source>
        <translation>每个 rank 最终都得到所有 rank 缓冲区的总和（DDP 的梯度同步）。环形算法每个 rank 发送缓冲区的 2(N−1)/N：先 reduce-scatter，再 all-gather。</translation>
    </message>
    <message>
        <source>prefetch</source>
        <translation>预取</translation>
    </message>
    <message>
        <source>Starting the next unit&apos;s all-gather before the current unit&apos;s compute ends, so communication overlaps compute; it costs one more gathered unit of memory.</source>
        <translation>在当前单元的计算结束之前就开始下一个单元的 all-gather，让通信与计算重叠；代价是多占用一个已收集单元的内存。</translation>
    </message>
    <message>
        <source>ledger</source>
        <translation>账本</translation>
    </message>
    <message>
        <source>Per rank, the live and peak bytes of every category and tier, updated by every allocation and free.</source>
        <translation>每个 rank 上每个类别和层级的当前字节数与峰值字节数，每次分配和释放都会更新。</translation>
    </message>
    <message>
        <source>This rank&apos;s slice of the parameters (bf16 with mixed precision): persistent under ZeRO-3 / FSDP.</source>
        <translation>本 rank 持有的参数切片（混合精度下为 bf16）：在 ZeRO-3 / FSDP 下常驻。</translation>
    </message>
    <message>
        <source>A unit&apos;s whole parameters: always live under DDP and ZeRO-1/2; under ZeRO-3 only between unshard and reshard.</source>
        <translation>单元的全部参数：在 DDP 和 ZeRO-1/2 下始终存在；在 ZeRO-3 下只在收集与重新分片之间存在。</translation>
    </message>
    <message>
        <source>A unit&apos;s whole gradient as backward produces it, before it is reduced.</source>
        <translation>反向传播产生的单元完整梯度，尚未规约。</translation>
    </message>
    <message>
        <source>This rank&apos;s slice of the summed gradient, what its optimizer shard needs.</source>
        <translation>本 rank 持有的已求和梯度切片，正是它的优化器分片所需要的。</translation>
    </message>
    <message>
        <source>The fp32 copy of the weights the optimizer updates (mixed precision), 4 bytes per parameter.</source>
        <translation>优化器更新的 fp32 权重副本（混合精度），每个参数 4 字节。</translation>
    </message>
    <message>
        <source>Adam&apos;s first moment, 4 bytes per parameter; sharded from ZeRO-1 on.</source>
        <translation>Adam 的一阶矩，每个参数 4 字节；从 ZeRO-1 起分片。</translation>
    </message>
    <message>
        <source>Adam&apos;s second moment, 4 bytes per parameter; sharded from ZeRO-1 on.</source>
        <translation>Adam 的二阶矩，每个参数 4 字节；从 ZeRO-1 起分片。</translation>
    </message>
    <message>
        <source>Layer outputs kept from the forward pass for the backward pass; checkpointing recomputes them instead.</source>
        <translation>前向传播中为反向传播保留的各层输出；激活检查点则改为重新计算它们。</translation>
    </message>
    <message>
        <source>Staging buffers for collectives, such as gradient buckets.</source>
        <translation>集合通信的中转缓冲区，例如梯度桶。</translation>
    </message>
    <message>
        <source>Short-lived scratch memory of kernels, such as fp32 copies of bf16 weights.</source>
        <translation>算子使用的短期临时内存，例如 bf16 权重的 fp32 副本。</translation>
    </message>
    <message>
        <source>exposed communication</source>
        <translation>暴露通信</translation>
    </message>
    <message>
        <source>The share of a step a rank spends waiting for communication that no compute hid: the union of the intervals in which any collective was outstanding, minus the time the rank was computing, over the step time. Prefetching the next unit&apos;s all-gather and reducing gradients in buckets during backward hide communication behind compute; what is left is exposed.</source>
        <translation>一步中某个 rank 等待通信、且没有被计算掩盖的时间占比：所有集合通信未完成区间的并集，减去该 rank 正在计算的时间，再除以步时间。预取下一个单元的 all-gather、在反向传播中按桶规约梯度，都能把通信隐藏在计算之后；剩下的就是暴露通信。</translation>
    </message>
    <message>
        <source>tensor parallelism (TP)</source>
        <translation>张量并行（TP）</translation>
    </message>
    <message>
        <source>tensor parallelism</source>
        <translation>张量并行</translation>
    </message>
    <message>
        <source>TP all-reduce</source>
        <translation>TP all-reduce</translation>
    </message>
    <message>
        <source>TP splits the computation, ZeRO splits the storage. With tensor parallelism T consecutive ranks share every layer&apos;s work: each holds heads / T attention heads and 4d / T MLP features and computes only those, and the partial outputs are summed by an all-reduce of the activations (forward) and of the input gradients (backward) — traffic on the critical path that grows with the batch, not the model. ZeRO / FSDP keep every rank computing the whole layer for its own samples and shard only the parameters, gradients and optimizer state. They combine on a T × D mesh: ZeRO shards each TP slice over the D data-parallel ranks, and both kinds of collective share the same links. Pipeline parallelism (layers on different ranks) is not simulated here.</source>
        <translation>TP 切分计算，ZeRO 切分存储。在张量并行中，T 个连续的 rank 分担每一层的工作：每个 rank 持有 heads / T 个注意力头和 4d / T 个 MLP 特征，只计算这些部分，部分输出再通过对激活值（前向）和输入梯度（反向）的 all-reduce 求和——这些通信位于关键路径上，随批大小而不是模型大小增长。ZeRO / FSDP 则让每个 rank 为自己的样本计算完整的层，只对参数、梯度和优化器状态分片。二者可以在 T × D 网格上组合：ZeRO 把每个 TP 切片分片到 D 个数据并行 rank 上，两类集合通信共用同一组链路。这里不模拟流水线并行（不同的层位于不同的 rank）。</translation>
    </message>
    <message>
        <source>padding</source>
        <translation>填充</translation>
    </message>
    <message>
        <source>Elements added at the end of a unit&apos;s flat buffer so that it splits into N equal shards: up to N − 1 of them, so the amount and which rank holds it change with N. Checkpoints never store it.</source>
        <translation>添加在单元扁平缓冲区末尾的元素，使其能分成 N 个相等的分片：最多 N − 1 个，因此填充量以及由哪个 rank 持有都随 N 变化。检查点从不保存填充。</translation>
    </message>
    <message>
        <source>resharding at load</source>
        <translation>加载时重新分片</translation>
    </message>
    <message>
        <source>Loading a checkpoint saved by N ranks into M ranks (or another strategy): every new rank works out the element ranges of its new shard and reads just the byte ranges of the saved files that overlap them. Not the same as resharding parameters after use.</source>
        <translation>把由 N 个 rank 保存的检查点加载到 M 个 rank（或另一种策略）上：每个新 rank 算出自己新分片的元素范围，只读取已保存文件中与之重叠的字节范围。这与参数用完后的重新分片不是一回事。</translation>
    </message>
    <message>
        <source>T × D mesh</source>
        <translation>T × D 网格</translation>
    </message>
    <message>
        <source>tensor-parallel group</source>
        <translation>张量并行组</translation>
    </message>
    <message>
        <source>data-parallel group</source>
        <translation>数据并行组</translation>
    </message>
    <message>
        <source>N = T × D ranks: each tensor-parallel group is T consecutive ranks that split every layer (heads, MLP columns and rows), each data-parallel group is the D ranks with the same TP index, over which ZeRO / FSDP shard that TP slice&apos;s parameters, gradients and optimizer state. Why combine them: TP divides what one sample&apos;s computation needs per rank (weights and activations of a layer) but its all-reduce after every row-parallel layer sits on the critical path, so T stays within a node&apos;s fast links; ZeRO divides the stored states over any number of ranks and hides its all-gathers behind compute by prefetching, but every rank still computes and keeps the activations of the whole layer. What they share: the same links and the same step time — a TP all-reduce waits for nothing to overlap it, while ZeRO&apos;s collectives compete with it for bandwidth.</source>
        <translation>N = T × D 个 rank：每个张量并行组是 T 个连续的 rank，它们切分每一层（注意力头、MLP 的列和行）；每个数据并行组是 TP 索引相同的 D 个 rank，ZeRO / FSDP 在组内对该 TP 切片的参数、梯度和优化器状态分片。为何结合二者：TP 减少单个样本的计算在每个 rank 上所需的内容（一层的权重和激活值），但每个行并行层之后的 all-reduce 位于关键路径上，因此 T 不超出一个节点内的高速链路；ZeRO 把存储的状态分摊到任意数量的 rank 上，并通过预取把 all-gather 隐藏在计算之后，但每个 rank 仍要计算整层并保留整层的激活值。二者共享什么：相同的链路和相同的步时间——TP all-reduce 没有可与之重叠的计算，而 ZeRO 的集合通信会与它争用带宽。</translation>
    </message>
    <message>
        <source>pipeline parallelism</source>
        <translation>流水线并行</translation>
    </message>
    <message>
        <source>pipeline stage</source>
        <translation>流水线阶段</translation>
    </message>
    <message>
        <source>P × T × D mesh</source>
        <translation>P × T × D 网格</translation>
    </message>
    <message>
        <source>Placing consecutive layers on different ranks (P stages) and streaming each step&apos;s M micro-batches through them: a stage receives the activations of its predecessor, computes its layers and sends its output on (a point-to-point message, pp_send / pp_recv), and the gradients travel back the same way. Each stage&apos;s ranks hold only its layers&apos; states, sharded by ZeRO / FSDP over its D data-parallel ranks, and T ranks may split each layer: N = P × T × D, the pipeline outermost (its messages carry the least), TP innermost (it all-reduces inside every layer). Its price is the bubble and the activations of the micro-batches in flight.</source>
        <translation>把连续的层放到不同的 rank 上（P 个阶段），并让每步的 M 个微批次依次流过它们：一个阶段接收前一阶段的激活值，计算自己的层，再把输出发给下一阶段（点对点消息，pp_send / pp_recv），梯度沿原路返回。每个阶段的 rank 只持有本阶段各层的状态，由 ZeRO / FSDP 在该阶段的 D 个数据并行 rank 上分片，另外 T 个 rank 可以切分每一层：N = P × T × D，流水线在最外层（它的消息传输量最小），TP 在最内层（它在每一层内部做 all-reduce）。代价是气泡以及在途微批次的激活值。</translation>
    </message>
    <message>
        <source>bubble</source>
        <translation>气泡</translation>
    </message>
    <message>
        <source>pipeline bubble</source>
        <translation>流水线气泡</translation>
    </message>
    <message>
        <source>1F1B</source>
        <translation>1F1B</translation>
    </message>
    <message>
        <source>GPipe</source>
        <translation>GPipe</translation>
    </message>
    <message>
        <source>The time a pipeline stage waits for its neighbour inside a step: while the first micro-batches fill the pipeline and the last ones drain it. GPipe (every forward, then every backward) and 1F1B (one forward, one backward once the pipeline is full) idle (P − 1)/(M + P − 1) of the step in theory; 1F1B holds fewer micro-batches&apos; activations (at most P − s on stage s, GPipe all M). The Timeline hatches each stage&apos;s measured bubble beside the schedule&apos;s theory.</source>
        <translation>一个流水线阶段在一步之内等待相邻阶段的时间：发生在最初几个微批次填充流水线、以及最后几个微批次排空流水线时。GPipe（先做完所有前向，再做所有反向）和 1F1B（流水线填满后前向、反向交替）在理论上空闲 (P − 1)/(M + P − 1) 的步长；1F1B 保留的微批次激活值更少（阶段 s 上最多 P − s 个，GPipe 为全部 M 个）。时间线用斜线阴影标出每个阶段实测的气泡，并与调度的理论值并列。</translation>
    </message>
</context>
<context>
    <name>LessonFacts</name>
    <message>
        <source>equal, byte for byte</source>
        <translation>逐字节相同</translation>
    </message>
    <message>
        <source>not equal</source>
        <translation>不相同</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>no unit</source>
        <translation>无单元</translation>
    </message>
    <message>
        <source>the run has no steps</source>
        <translation>该运行没有任何训练步</translation>
    </message>
    <message>
        <source>the run has %1 steps, the lesson asks for step %2</source>
        <translation>该运行只有 %1 步，而课程要求第 %2 步</translation>
    </message>
    <message>
        <source>the run has %1 ranks, the lesson asks for rank %2</source>
        <translation>该运行只有 %1 个 rank，而课程要求 rank %2</translation>
    </message>
    <message>
        <source>no event of step %1 matches the lesson&apos;s seek</source>
        <translation>第 %1 步中没有与课程定位条件匹配的事件</translation>
    </message>
</context>
<context>
    <name>Palette</name>
    <message>
        <source>memory (greens, blues)</source>
        <translation>内存（绿色、蓝色）</translation>
    </message>
    <message>
        <source>activities (reds, yellows)</source>
        <translation>活动（红色、黄色）</translation>
    </message>
    <message>
        <source>ranks and strategies (violets)</source>
        <translation>rank 与策略（紫色）</translation>
    </message>
    <message>
        <source>transfers between tiers (blue-violets)</source>
        <translation>层级间传输（蓝紫色）</translation>
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
    <name>RunLabels</name>
    <message>
        <source>forward</source>
        <translation>前向</translation>
    </message>
    <message>
        <source>backward</source>
        <translation>反向</translation>
    </message>
    <message>
        <source>optimizer</source>
        <translation>优化器</translation>
    </message>
    <message>
        <source>recompute</source>
        <translation>重计算</translation>
    </message>
    <message>
        <source>all-gather</source>
        <translation>all-gather（全收集）</translation>
    </message>
    <message>
        <source>reduce-scatter</source>
        <translation>reduce-scatter（规约分散）</translation>
    </message>
    <message>
        <source>all-reduce</source>
        <translation>all-reduce（全规约）</translation>
    </message>
    <message>
        <source>broadcast</source>
        <translation>broadcast（广播）</translation>
    </message>
    <message>
        <source>DDP: every rank keeps the whole model — parameters, gradients and optimizer state — and all-reduces gradients.</source>
        <translation>DDP：每个 rank 都保存完整模型——参数、梯度和优化器状态——并对梯度做 all-reduce。</translation>
    </message>
    <message>
        <source>ZeRO-1: each rank keeps 1/%1 of the optimizer state (fp32 master, Adam m, v); parameters and gradients stay whole.</source>
        <translation>ZeRO-1：每个 rank 只保存 1/%1 的优化器状态（fp32 主权重、Adam m、v）；参数和梯度仍是完整的。</translation>
    </message>
    <message>
        <source>ZeRO-2: optimizer state and gradients are sharded 1/%1; gradients are reduce-scattered bucket by bucket during backward.</source>
        <translation>ZeRO-2：优化器状态和梯度按 1/%1 分片；反向传播期间梯度按桶逐个 reduce-scatter。</translation>
    </message>
    <message>
        <source>ZeRO-3: parameters, gradients and optimizer state are all sharded 1/%1; each unit is all-gathered just before it computes and freed right after.</source>
        <translation>ZeRO-3：参数、梯度和优化器状态全部按 1/%1 分片；每个单元在计算前才 all-gather，计算后立即释放。</translation>
    </message>
    <message>
        <source>FSDP full shard: each unit&apos;s flat parameter is sharded 1/%1, all-gathered for forward and backward, and resharded after use.</source>
        <translation>FSDP 完全分片：每个单元的扁平参数按 1/%1 分片，前向和反向时 all-gather，用完后重新分片。</translation>
    </message>
    <message>
        <source>FSDP shard grad-op: gradients and optimizer state are sharded 1/%1; parameters stay gathered from forward until backward ends.</source>
        <translation>FSDP 梯度与优化器分片：梯度和优化器状态按 1/%1 分片；参数从前向开始一直保持收集状态，直到反向结束。</translation>
    </message>
    <message>
        <source>FSDP hybrid shard: units are sharded inside groups of %1 ranks and replicated across the %2 groups.</source>
        <translation>FSDP 混合分片：单元在每组 %1 个 rank 内分片，并在 %2 个组之间复制。</translation>
    </message>
    <message>
        <source>during setup</source>
        <translation>在初始化阶段</translation>
    </message>
    <message>
        <source>in step %1</source>
        <translation>在第 %1 步</translation>
    </message>
    <message>
        <source>Exposed communication: the share of the step spent waiting for communication that no compute hid — the union of the intervals in which a collective was outstanding, minus compute, over the step time. Lower is better: prefetching and bucketing hide communication behind compute.</source>
        <translation>暴露通信：一步中等待通信、且没有被计算掩盖的时间占比——集合通信未完成区间的并集减去计算时间，再除以步时间。越低越好：预取和分桶会把通信隐藏在计算之后。</translation>
    </message>
    <message>
        <source>checkpoint save</source>
        <translation>保存检查点</translation>
    </message>
    <message>
        <source>tensor-parallel all-reduce</source>
        <translation>张量并行 all-reduce</translation>
    </message>
    <message>
        <source>device → host</source>
        <translation>设备 → 主机</translation>
    </message>
    <message>
        <source>host → device</source>
        <translation>主机 → 设备</translation>
    </message>
    <message>
        <source>NVMe read</source>
        <translation>NVMe 读取</translation>
    </message>
    <message>
        <source>NVMe write</source>
        <translation>NVMe 写入</translation>
    </message>
    <message>
        <source>Exposed transfers: the share of the step in which offloaded state was crossing tiers (device ↔ host copies, NVMe reads and writes) while the rank computed nothing — the union of the transfer intervals minus compute, where the rank&apos;s own copies and its waits for NVMe count as not computing. Lower is better: pipelining per unit hides NVMe traffic behind the optimizer.</source>
        <translation>暴露传输：一步中卸载的状态在层级之间传输（设备 ↔ 主机复制、NVMe 读写）而该 rank 没有任何计算的时间占比——传输区间的并集减去计算时间，其中该 rank 自己的复制操作及其等待 NVMe 的时间都算作未计算。越低越好：按单元流水化可以把 NVMe 流量隐藏在优化器计算之后。</translation>
    </message>
    <message>
        <source>rank %1 %2</source>
        <translation>rank %1 %2</translation>
    </message>
    <message>
        <source>&lt;b&gt;Exposed transfers&lt;/b&gt; between tiers: up to %1.</source>
        <translation>&lt;b&gt;暴露传输&lt;/b&gt;（层级之间）：最高 %1。</translation>
    </message>
    <message>
        <source>&lt;b&gt;Exposed transfers&lt;/b&gt; between tiers: %1.</source>
        <translation>&lt;b&gt;暴露传输&lt;/b&gt;（层级之间）：%1。</translation>
    </message>
    <message>
        <source>all-gather</source>
        <comment>short, on a bar</comment>
        <translation>all-gather</translation>
    </message>
    <message>
        <source>reduce-scatter</source>
        <comment>short, on a bar</comment>
        <translation>reduce-scatter</translation>
    </message>
    <message>
        <source>all-reduce</source>
        <comment>short, on a bar</comment>
        <translation>all-reduce</translation>
    </message>
    <message>
        <source>broadcast</source>
        <comment>short, on a bar</comment>
        <translation>broadcast</translation>
    </message>
    <message>
        <source>TP all-reduce</source>
        <comment>short, on a bar</comment>
        <translation>TP all-reduce</translation>
    </message>
    <message>
        <source>the forward of %1</source>
        <translation>%1 的前向</translation>
    </message>
    <message>
        <source>the backward of %1</source>
        <translation>%1 的反向</translation>
    </message>
    <message>
        <source>the gradient reduction of %1</source>
        <translation>%1 的梯度归约</translation>
    </message>
    <message>
        <source>the gradient reduce-scatter</source>
        <translation>梯度 reduce-scatter</translation>
    </message>
    <message>
        <source>the parameter all-gather</source>
        <translation>参数 all-gather</translation>
    </message>
    <message>
        <source>the start of the step</source>
        <translation>步骤开始时</translation>
    </message>
    <message>
        <source>the backward pass</source>
        <translation>反向传播</translation>
    </message>
    <message>
        <source>%1 ms</source>
        <translation>%1 毫秒</translation>
    </message>
    <message>
        <source>&lt;b&gt;On %1&lt;/b&gt;: ≈ %2 a step (estimate; here %3).</source>
        <translation>&lt;b&gt;%1 上&lt;/b&gt;约 %2/步（估算；此处 %3）。</translation>
    </message>
    <message>
        <source>&lt;b&gt;On %1&lt;/b&gt;: ≈ %2 a step (estimate).</source>
        <translation>&lt;b&gt;%1 上&lt;/b&gt;约 %2/步（估算）。</translation>
    </message>
    <message>
        <source>On GPUs: an estimate, not a measurement, and an optimistic one. Each collective this rank called in a step is priced on a ring over NVLink 4 between the H100 GPUs of one node (up to 8): a latency per call and per ring step (%1 µs + %2 µs a step, the latency of NCCL&apos;s low-latency protocol) plus the bytes the rank sent at a bus bandwidth of %3 GB/s (a large message&apos;s). No contention and no overlap with compute; the gradient norm&apos;s scalar all-reduces are not in the run&apos;s traffic figures. GPUs also compute faster, so the exposed share on a GPU cluster depends on both.</source>
        <translation>在 GPU 上：这是估算，不是测量，而且偏乐观。该 rank 一步中调用的每个集合通信都按一个节点内（最多 8 块）H100 GPU 之间 NVLink 4 上的环形算法计价：每次调用和每个环步的延迟（%1 µs + 每步 %2 µs，即 NCCL 低延迟协议的延迟），加上该 rank 发送的字节按 %3 GB/s 的总线带宽（大消息的带宽）计算。不考虑争用，也不考虑与计算的重叠；梯度范数的标量 all-reduce 不在本次运行的通信量数字中。GPU 的计算也更快，因此 GPU 集群上暴露的比例取决于两者。</translation>
    </message>
    <message>
        <source>send</source>
        <comment>short, on a bar</comment>
        <translation>发送</translation>
    </message>
    <message>
        <source>receive</source>
        <comment>short, on a bar</comment>
        <translation>接收</translation>
    </message>
    <message>
        <source>pipeline send</source>
        <translation>流水线发送</translation>
    </message>
    <message>
        <source>pipeline receive</source>
        <translation>流水线接收</translation>
    </message>
    <message>
        <source>weight gradients</source>
        <translation>权重梯度</translation>
    </message>
</context>
<context>
    <name>RunRequest</name>
    <message>
        <source>ranks must be between 1 and %1</source>
        <translation>rank 数必须在 1 到 %1 之间</translation>
    </message>
    <message>
        <source>&apos;%1&apos; is not a size (examples: 64MiB, 1.5GB, 1000000)</source>
        <translation>“%1”不是有效的大小（例如：64MiB、1.5GB、1000000）</translation>
    </message>
    <message>
        <source>&apos;%1&apos; is too large</source>
        <translation>“%1”太大</translation>
    </message>
    <message>
        <source>GPU unavailable: %1</source>
        <translation>GPU 不可用：%1</translation>
    </message>
    <message numerus="yes">
        <source>%1 ranks on %n GPU(s): under mpirun each rank needs its own GPU. Tick “Ranks as threads in one process” to run them all on GPU 0.</source>
        <translation>
            <numerusform>%1 个 rank，%n 块 GPU：在 mpirun 下每个 rank 需要独占一块 GPU。勾选“以单进程内的线程运行各 rank”，即可让它们全部在 GPU 0 上运行。</numerusform>
        </translation>
    </message>
    <message>
        <source>This build has no NCCL, which GPU ranks under mpirun need. Tick “Ranks as threads in one process” to run them on GPU 0.</source>
        <translation>此版本未包含 NCCL，而 mpirun 下的 GPU rank 需要它。勾选“以单进程内的线程运行各 rank”，即可让它们在 GPU 0 上运行。</translation>
    </message>
    <message>
        <source>GPU found (%1), but this build&apos;s worker has no CUDA backend: configure with nvcc available (SHARDSCOPE_CUDA=AUTO or ON)</source>
        <translation>已找到 GPU（%1），但此版本的 worker 没有 CUDA 后端：请在可用 nvcc 的环境下配置（SHARDSCOPE_CUDA=AUTO 或 ON）</translation>
    </message>
    <message>
        <source>this build&apos;s worker has no MPI</source>
        <translation>此版本的 worker 不含 MPI</translation>
    </message>
    <message>
        <source>mpirun not found</source>
        <translation>找不到 mpirun</translation>
    </message>
    <message>
        <source>its %1 ranks are more than the rank view shows (%2)</source>
        <translation>它的 %1 个 rank 超过了 Rank 视图能显示的数量（%2）</translation>
    </message>
    <message>
        <source>it converted a checkpoint (0 steps); the run settings train at least one step</source>
        <translation>它转换了一个检查点（0 步）；运行设置至少训练一步</translation>
    </message>
    <message>
        <source>ranks must be between %1 and %2</source>
        <translation>rank 数必须在 %1 到 %2 之间</translation>
    </message>
    <message>
        <source>steps must be between %1 and %2</source>
        <translation>步数必须在 %1 到 %2 之间</translation>
    </message>
    <message>
        <source>micro-batch must be between %1 and %2 (0: the preset&apos;s)</source>
        <translation>微批大小必须在 %1 到 %2 之间（0：使用预设值）</translation>
    </message>
    <message>
        <source>buckets must hold at least %1 byte(s)</source>
        <translation>桶至少要容纳 %1 字节</translation>
    </message>
    <message>
        <source>prefetch depth must be between %1 and %2 units</source>
        <translation>预取深度必须在 %1 到 %2 个单元之间</translation>
    </message>
    <message>
        <source>in-flight all-gathers must be between %1 and %2</source>
        <translation>同时进行的 all-gather 数必须在 %1 到 %2 之间</translation>
    </message>
    <message>
        <source>the persistence threshold must be between %1 and %2 parameters</source>
        <translation>常驻阈值必须在 %1 到 %2 个参数之间</translation>
    </message>
    <message>
        <source>the hybrid group must be between %1 and %2 ranks</source>
        <translation>混合分片组必须在 %1 到 %2 个 rank 之间</translation>
    </message>
    <message>
        <source>a capacity budget must be more than 0 bytes</source>
        <translation>容量预算必须大于 0 字节</translation>
    </message>
    <message>
        <source>tensor parallel T must be between %1 and %2</source>
        <translation>张量并行 T 必须在 %1 到 %2 之间</translation>
    </message>
    <message>
        <source>value %1 is outside %2–%3</source>
        <translation>值 %1 超出范围 %2–%3</translation>
    </message>
    <message>
        <source>unknown model preset &apos;%1&apos; (expected %2)</source>
        <translation>未知的模型预设“%1”（可选：%2）</translation>
    </message>
    <message>
        <source>T must divide the ranks (%1 ranks: %2)</source>
        <translation>T 必须整除 rank 数（%1 个 rank：%2）</translation>
    </message>
    <message>
        <source>T must divide the model&apos;s %1 attention heads (%2)</source>
        <translation>T 必须整除模型的 %1 个注意力头（%2）</translation>
    </message>
    <message>
        <source>T must divide the model&apos;s MLP width %1</source>
        <translation>T 必须整除模型的 MLP 宽度 %1</translation>
    </message>
    <message>
        <source>the hybrid group must divide the ranks (%1 ranks: %2)</source>
        <translation>混合分片组大小必须整除 rank 数（%1 个 rank：%2）</translation>
    </message>
    <message>
        <source>FSDP SHARD_GRAD_OP keeps parameters gathered: it cannot reshard after forward</source>
        <translation>FSDP SHARD_GRAD_OP 会让参数保持收集状态：它不能在前向后重新分片</translation>
    </message>
    <message>
        <source>no_sync is an FSDP option</source>
        <translation>no_sync 是 FSDP 的选项</translation>
    </message>
    <message>
        <source>theory cannot size this run: %1</source>
        <translation>理论模型无法估算此次运行：%1</translation>
    </message>
    <message>
        <source>optimizer offload needs a strategy that shards the optimizer (ZeRO-1/2/3, FSDP), not %1</source>
        <translation>优化器卸载需要对优化器分片的策略（ZeRO-1/2/3、FSDP），而不是 %1</translation>
    </message>
    <message>
        <source>parameter offload needs a strategy that shards parameters (ZeRO-3, FSDP), not %1</source>
        <translation>参数卸载需要对参数分片的策略（ZeRO-3、FSDP），而不是 %1</translation>
    </message>
    <message>
        <source>offload needs bf16 mixed precision (fp32 master weights on the host)</source>
        <translation>卸载需要 bf16 混合精度（fp32 主权重位于主机内存）</translation>
    </message>
    <message>
        <source>the NVMe tier is not available in this build</source>
        <translation>此版本不支持 NVMe 层级</translation>
    </message>
    <message>
        <source>checkpoints of a run with %1 are not supported</source>
        <translation>不支持为使用 %1 的运行保存检查点</translation>
    </message>
    <message>
        <source>%1 needs %2</source>
        <translation>%1 需要 %2</translation>
    </message>
    <message>
        <source>save every must be between %1 and %2 steps (0: only after the last step)</source>
        <translation>保存间隔必须在 %1 到 %2 步之间（0：只在最后一步之后保存）</translation>
    </message>
    <message>
        <source>the hybrid group must divide the data-parallel ranks D = ranks / T (D = %1: %2)</source>
        <translation>混合分片组大小必须整除数据并行 rank 数 D = rank 数 / T（D = %1：%2）</translation>
    </message>
    <message>
        <source>saving every K steps needs a save folder</source>
        <translation>每 K 步保存一次需要指定保存文件夹</translation>
    </message>
    <message>
        <source>&apos;%1&apos; is not a checkpoint folder</source>
        <translation>“%1”不是检查点文件夹</translation>
    </message>
    <message>
        <source>&apos;%1&apos; is not a folder</source>
        <translation>“%1”不是文件夹</translation>
    </message>
    <message>
        <source>Choose a folder for the NVMe tier&apos;s files (one per rank).</source>
        <translation>请为 NVMe 层级的文件选择一个文件夹（每个 rank 一个文件）。</translation>
    </message>
    <message>
        <source>pipeline: %1</source>
        <translation>流水线：%1</translation>
    </message>
</context>
<context>
    <name>Screenshot</name>
    <message>
        <source>rendered %1×%2 instead of %3×%4</source>
        <translation>渲染尺寸为 %1×%2，而不是 %3×%4</translation>
    </message>
    <message>
        <source>cannot encode the image as %1</source>
        <translation>无法将图像编码为 %1</translation>
    </message>
    <message>
        <source>cannot write %1: %2</source>
        <translation>无法写入 %1：%2</translation>
    </message>
    <message>
        <source>cannot write a screenshot as &apos;%1&apos;: the name must end in %2</source>
        <translation>无法将截图写为“%1”：文件名必须以 %2 结尾</translation>
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
    <name>StreamReceiver</name>
    <message>
        <source>cannot open %1: %2</source>
        <translation>无法打开 %1：%2</translation>
    </message>
    <message>
        <source>cannot read %1: %2</source>
        <translation>无法读取 %1：%2</translation>
    </message>
    <message>
        <source>%1 is not a ShardScope recording (too short)</source>
        <translation>%1 不是 ShardScope 录制文件（太短）</translation>
    </message>
    <message>
        <source>%1 is truncated (%2 bytes of an unfinished record at the end)</source>
        <translation>%1 已被截断（末尾有 %2 字节的未完成记录）</translation>
    </message>
    <message>
        <source>%1 has no handshake record</source>
        <translation>%1 中没有握手记录</translation>
    </message>
    <message>
        <source>cannot open %1: not a regular file</source>
        <translation>无法打开 %1：不是普通文件</translation>
    </message>
    <message numerus="yes">
        <source>%1 ends before the run finished — showing the first %n step(s)</source>
        <translation>
            <numerusform>%1 在运行结束前就中断了 — 只显示前 %n 步</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>TheoryText</name>
    <message>
        <source>unpadded, rounded up</source>
        <translation>未填充，向上取整</translation>
    </message>
    <message>
        <source>padded elements</source>
        <translation>填充后的元素数</translation>
    </message>
    <message>
        <source>params (kept whole)</source>
        <translation>参数（保持完整）</translation>
    </message>
    <message>
        <source>gathered from forward to backward</source>
        <translation>从前向到反向一直保持收集</translation>
    </message>
    <message>
        <source>ZeRO paper</source>
        <translation>ZeRO 论文</translation>
    </message>
    <message>
        <source>baseline DP</source>
        <translation>基准 DP</translation>
    </message>
    <message>
        <source>PyTorch FSDP</source>
        <translation>PyTorch FSDP</translation>
    </message>
    <message>
        <source>FULL_SHARD flat parameter</source>
        <translation>FULL_SHARD 扁平参数</translation>
    </message>
    <message>
        <source>et al.</source>
        <translation>等</translation>
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
    <name>TimelinePainter</name>
    <message>
        <source>gathered parameters</source>
        <translation>已收集的参数</translation>
    </message>
    <message>
        <source>%1 ns</source>
        <translation>%1 纳秒</translation>
    </message>
    <message>
        <source>%1 µs</source>
        <translation>%1 微秒</translation>
    </message>
    <message>
        <source>%1 ms</source>
        <translation>%1 毫秒</translation>
    </message>
    <message>
        <source>%1 s</source>
        <translation>%1 秒</translation>
    </message>
    <message>
        <source>%1 GB/s</source>
        <translation>%1 GB/s</translation>
    </message>
    <message>
        <source>%1 MB/s</source>
        <translation>%1 MB/s</translation>
    </message>
    <message>
        <source>%1 kB/s</source>
        <translation>%1 kB/s</translation>
    </message>
    <message>
        <source>step %1</source>
        <translation>第 %1 步</translation>
    </message>
    <message>
        <source>unit %1</source>
        <translation>单元 %1</translation>
    </message>
    <message>
        <source>live bytes (memory curve)</source>
        <translation>实时字节数（内存曲线）</translation>
    </message>
    <message>
        <source>No events yet: run a job or open a recording.</source>
        <translation>尚无事件：请运行任务或打开录制文件。</translation>
    </message>
    <message>
        <source>rank %1</source>
        <translation>rank %1</translation>
    </message>
    <message>
        <source>peak %1</source>
        <translation>峰值 %1</translation>
    </message>
    <message>
        <source>live bytes</source>
        <translation>实时字节数</translation>
    </message>
    <message>
        <source>▼ waits on a transfer</source>
        <translation>▼ 等待传输</translation>
    </message>
    <message>
        <source>stage %1</source>
        <translation>阶段 %1</translation>
    </message>
    <message>
        <source>stage %1 · bubble %2 %</source>
        <translation>阶段 %1 · 气泡 %2 %</translation>
    </message>
    <message>
        <source>#%1</source>
        <translation>#%1</translation>
    </message>
    <message>
        <source>F%1 %2</source>
        <translation>F%1 %2</translation>
    </message>
    <message>
        <source>B%1 %2</source>
        <translation>B%1 %2</translation>
    </message>
    <message>
        <source>bubble (%1 theory: %2 %)</source>
        <translation>气泡（%1 理论值：%2 %）</translation>
    </message>
    <message>
        <source>bubble</source>
        <translation>气泡</translation>
    </message>
    <message>
        <source>W%1 %2</source>
        <translation>W%1 %2</translation>
    </message>
    <message>
        <source>F%1.%2 %3</source>
        <translation>F%1.%2 %3</translation>
    </message>
    <message>
        <source>B%1.%2 %3</source>
        <translation>B%1.%2 %3</translation>
    </message>
</context>
<context>
    <name>main</name>
    <message>
        <source>ZeRO and FSDP, executed and explained.</source>
        <translation>ZeRO 与 FSDP：真实执行，逐项解释。</translation>
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
        <source>--size %1x%2 is smaller than the window can be laid out; it needs at least %3x%4</source>
        <translation>--size %1x%2 小于窗口可布局的尺寸；至少需要 %3x%4</translation>
    </message>
    <message>
        <source>unknown language &apos;%1&apos; (expected: en, zh_CN)</source>
        <translation>未知语言 &apos;%1&apos;（可选：en、zh_CN）</translation>
    </message>
    <message>
        <source>unknown view &apos;%1&apos; (expected: %2)</source>
        <translation>未知视图 &apos;%1&apos;（可选：%2）</translation>
    </message>
    <message>
        <source>Run the default scenario (small, 4 CPU ranks, ZeRO-3); the default without --view or --open.</source>
        <translation>运行默认场景（small，4 个 CPU rank，ZeRO-3）；未指定 --view 或 --open 时默认如此。</translation>
    </message>
    <message>
        <source>With --screenshot: capture once this many steps have run (default 1).</source>
        <translation>与 --screenshot 一起使用：运行到这么多步后截图（默认 1）。</translation>
    </message>
    <message>
        <source>--after-steps needs a step count between 1 and %1, got &apos;%2&apos;</source>
        <translation>--after-steps 需要 1 到 %1 之间的步数，实际为“%2”</translation>
    </message>
    <message>
        <source>--run-default and --open cannot be combined</source>
        <translation>--run-default 与 --open 不能同时使用</translation>
    </message>
    <message>
        <source>Render the window to an image (.png, .jpg or .bmp) and exit.</source>
        <translation>将窗口渲染为图像（.png、.jpg 或 .bmp）后退出。</translation>
    </message>
    <message>
        <source>unknown lesson &apos;%1&apos; (expected: %2)</source>
        <translation>未知课程 &apos;%1&apos;（可选：%2）</translation>
    </message>
    <message>
        <source>--lesson-step needs a step between 1 and %1 for lesson &apos;%2&apos;, got &apos;%3&apos;</source>
        <translation>--lesson-step 需要课程“%2”的 1 到 %1 之间的步骤，实际为“%3”</translation>
    </message>
    <message>
        <source>this window has no lessons</source>
        <translation>此窗口没有课程</translation>
    </message>
    <message>
        <source>lesson &apos;%1&apos; step %2 did not load within 120 s</source>
        <translation>课程“%1”的第 %2 个步骤未能在 120 秒内加载</translation>
    </message>
    <message>
        <source>Window size in pixels, e.g. 1024x700 (with --screenshot: the image&apos;s size).</source>
        <translation>窗口大小（像素），例如 1024x700（与 --screenshot 一起使用时：即图像大小）。</translation>
    </message>
    <message>
        <source>List the lessons (ID and title) and exit.</source>
        <translation>列出所有课程（ID 和标题）后退出。</translation>
    </message>
    <message>
        <source>Start the lesson ID (see --list-lessons).</source>
        <translation>开始课程 ID（参见 --list-lessons）。</translation>
    </message>
    <message>
        <source>With --lesson: start at step K (from 1).</source>
        <translation>与 --lesson 一起使用：从第 K 个步骤开始（从 1 起计）。</translation>
    </message>
    <message>
        <source>--lesson-step needs --lesson ID</source>
        <translation>--lesson-step 需要 --lesson ID</translation>
    </message>
    <message>
        <source>--lesson opens its own runs: it cannot be combined with --open or --run-default</source>
        <translation>--lesson 会打开自己的运行：不能与 --open 或 --run-default 同时使用</translation>
    </message>
    <message>
        <source>--size needs WIDTHxHEIGHT with each side between %1 and %2 pixels, got &apos;%3&apos;</source>
        <translation>--size 需要 WIDTHxHEIGHT 格式，每边在 %1 到 %2 像素之间，实际为“%3”</translation>
    </message>
    <message>
        <source>Page to show: ranks, timeline, flows, compare, calculator or checkpoints.</source>
        <translation>要显示的页面：ranks、timeline、flows、compare、calculator 或 checkpoints。</translation>
    </message>
    <message>
        <source>Open a recording (.sstrace) on the Ranks page, a run/compare report (.json) on the Compare page, or a checkpoint folder on the Checkpoints page.</source>
        <translation>在“Rank 视图”页面打开录制文件（.sstrace），在“对比”页面打开运行/对比报告（.json），或在“检查点”页面打开检查点文件夹。</translation>
    </message>
    <message>
        <source>Presentation mode: large text for a projector, side panels put away (F5 toggles it).</source>
        <translation>演示模式：为投影仪放大文字，收起侧边面板（F5 切换）。</translation>
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
    <message>
        <source>Open model config</source>
        <translation>打开模型配置</translation>
    </message>
    <message>
        <source>Hugging Face config (*.json)</source>
        <translation>Hugging Face 配置 (*.json)</translation>
    </message>
    <message>
        <source>Tensor parallel (T)</source>
        <translation>张量并行 (T)</translation>
    </message>
    <message>
        <source>N = T × D: T ranks split each block&apos;s computation (tensor parallelism), the strategy shards each TP slice over D = N / T ranks. Per-rank states are one slice&apos;s; the communication adds the TP all-reduces of activations. Needs a preset whose heads T divides.</source>
        <translation>N = T × D：T 个 rank 切分每个块的计算（张量并行），策略把每个 TP 切片分片到 D = N / T 个 rank 上。每个 rank 的状态是一个切片的状态；通信量还要加上激活值的 TP all-reduce。需要注意力头数能被 T 整除的预设。</translation>
    </message>
    <message>
        <source>%1 — %2 units, largest layer %3 params</source>
        <translation>%1 — %2 个单元，最大层 %3 参数</translation>
    </message>
    <message>
        <source>Open model config…</source>
        <translation>打开模型配置…</translation>
    </message>
    <message>
        <source>A Hugging Face config.json (gpt2, llama, mistral, qwen2): exact parameters and units</source>
        <translation>Hugging Face 的 config.json（gpt2、llama、mistral、qwen2）：精确的参数量和单元</translation>
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
    <message>
        <source>Why the peak exceeds the model states</source>
        <translation>峰值为何超过模型状态</translation>
    </message>
    <message>
        <source>Model-state derivation</source>
        <translation>模型状态推导</translation>
    </message>
    <message>
        <source>(a bare parameter count: activations and workspace not predicted)</source>
        <translation>（仅参数量：不预测激活值和工作区）</translation>
    </message>
    <message>
        <source>Mesh T × D = %1 × %2: Ψ below is one TP rank&apos;s slice of the model&apos;s %3</source>
        <translation>网格 T × D = %1 × %2：下方的 Ψ 是模型 %3 中一个 TP rank 的切片</translation>
    </message>
    <message>
        <source>tensor-parallel traffic (TP group of %1, critical path): %2 in %3 calls</source>
        <translation>张量并行通信量（%1 个 rank 的 TP 组，关键路径）：%3 次调用共 %2</translation>
    </message>
    <message>
        <source>data-parallel traffic (DP group of %1): %2 in %3 calls</source>
        <translation>数据并行通信量（%1 个 rank 的 DP 组）：%3 次调用共 %2</translation>
    </message>
    <message>
        <source>Communication per rank per step: &lt;b&gt;%1&lt;/b&gt; sent, tensor- and data-parallel together (the data-parallel part alone ≈ %2 Ψ)</source>
        <translation>每个 rank 每步通信：发送 &lt;b&gt;%1&lt;/b&gt;，张量并行与数据并行合计（仅数据并行部分 ≈ %2 Ψ）</translation>
    </message>
    <message>
        <source>Pipeline bubble</source>
        <translation>流水线气泡</translation>
    </message>
    <message>
        <source>Memory vs P × T × D</source>
        <translation>内存与 P × T × D</translation>
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
    <name>shardscope::widgets::CheckpointsPage</name>
    <message>
        <source>Checkpoints</source>
        <translation>检查点</translation>
    </message>
    <message>
        <source>Open a checkpoint folder</source>
        <translation>打开检查点文件夹</translation>
    </message>
    <message>
        <source>Cannot open the checkpoint: %1</source>
        <translation>无法打开检查点：%1</translation>
    </message>
    <message numerus="yes">
        <source>%n interrupted save(s) left over (ignored by loading)</source>
        <translation>
            <numerusform>遗留了 %n 个中断的保存（加载时忽略）</numerusform>
        </translation>
    </message>
    <message>
        <source>it holds no complete step</source>
        <translation>其中没有任何完整的步</translation>
    </message>
    <message>
        <source>Cannot read this step: %1</source>
        <translation>无法读取此步：%1</translation>
    </message>
    <message>
        <source>Cannot load at this target: %1</source>
        <translation>无法在此目标上加载：%1</translation>
    </message>
    <message>
        <source>New rank %1</source>
        <translation>新 rank %1</translation>
    </message>
    <message numerus="yes">
        <source>%n read(s) from %1 file(s)</source>
        <translation>
            <numerusform>从 %1 个文件读取 %n 次</numerusform>
        </translation>
    </message>
    <message>
        <source>%1 read (whole checksum chunks)</source>
        <translation>读取 %1（整块读取校验块）</translation>
    </message>
    <message>
        <source>%1 bytes of this rank&apos;s shard (master, Adam m, Adam v); %2 bytes read, since a checksum chunk is read whole to check it</source>
        <translation>本 rank 的分片有 %1 字节（主权重、Adam m、Adam v）；实际读取 %2 字节，因为校验块需要整块读取才能校验</translation>
    </message>
    <message>
        <source>%1–%2 · %3–%4 · %5–%6</source>
        <translation>%1–%2 · %3–%4 · %5–%6</translation>
    </message>
    <message>
        <source>OK</source>
        <translation>正常</translation>
    </message>
    <message>
        <source>missing</source>
        <translation>缺失</translation>
    </message>
    <message>
        <source>wrong size</source>
        <translation>大小错误</translation>
    </message>
    <message>
        <source>checksum mismatch</source>
        <translation>校验和不匹配</translation>
    </message>
    <message>
        <source>unreadable</source>
        <translation>无法读取</translation>
    </message>
    <message>
        <source>%1 bytes</source>
        <translation>%1 字节</translation>
    </message>
    <message>
        <source>verifying…</source>
        <translation>正在校验…</translation>
    </message>
    <message>
        <source>not verified: %1</source>
        <translation>未校验：%1</translation>
    </message>
    <message>
        <source>Step %1, saved by %2 on N = %3 ranks: %4 parameters, %5 files, %6.</source>
        <translation>第 %1 步，由 %2 在 N = %3 个 rank 上保存：%4 个参数，%5 个文件，%6。</translation>
    </message>
    <message>
        <source>Every file verified.</source>
        <translation>所有文件均已通过校验。</translation>
    </message>
    <message numerus="yes">
        <source>%n file(s) damaged: a resumed run would refuse it.</source>
        <translation>
            <numerusform>%n 个文件已损坏：恢复运行会拒绝该检查点。</numerusform>
        </translation>
    </message>
    <message>
        <source>Verifying the files…</source>
        <translation>正在校验文件…</translation>
    </message>
    <message>
        <source>No model preset of the run settings has this checkpoint&apos;s shape.</source>
        <translation>运行设置中没有与该检查点结构相符的模型预设。</translation>
    </message>
    <message>
        <source>Fills the Ranks page&apos;s run settings: %1 on %2 ranks, resuming from %3.</source>
        <translation>填入 Rank 视图的运行设置：%1，%2 个 rank，从 %3 恢复。</translation>
    </message>
    <message>
        <source>Each unit: the saved files&apos; ranges (rank colours of N = %1), the reads of each new rank (coloured by the file they come from), the new shards (rank colours of M = %2); hatched: padding. Hover for bytes.</source>
        <translation>每个单元：已保存文件的范围（N = %1 时的 rank 颜色）、每个新 rank 的读取（按来源文件着色）、新分片（M = %2 时的 rank 颜色）；斜线阴影：填充。悬停可查看字节数。</translation>
    </message>
    <message>
        <source>Open a checkpoint folder (File → Open checkpoint…) to see how it reshards.</source>
        <translation>打开检查点文件夹（文件 → 打开检查点…）以查看它如何重新分片。</translation>
    </message>
    <message>
        <source>%1 (latest)</source>
        <translation>%1（最新）</translation>
    </message>
    <message>
        <source>Open checkpoint…</source>
        <translation>打开检查点…</translation>
    </message>
    <message>
        <source>Open checkpoint folder…</source>
        <translation>打开检查点文件夹…</translation>
    </message>
    <message>
        <source>No checkpoint open.</source>
        <translation>未打开检查点。</translation>
    </message>
    <message>
        <source>Step</source>
        <translation>步</translation>
    </message>
    <message>
        <source>Load on M ranks</source>
        <translation>在 M 个 rank 上加载</translation>
    </message>
    <message>
        <source>Strategy</source>
        <translation>策略</translation>
    </message>
    <message>
        <source>Hybrid group (ranks)</source>
        <translation>混合分片组（rank 数）</translation>
    </message>
    <message>
        <source>Resume a run from here</source>
        <translation>从此处恢复运行</translation>
    </message>
    <message>
        <source>Fill the run settings on the Ranks page: this step, M ranks and the strategy chosen here.</source>
        <translation>填入 Rank 视图的运行设置：此步、M 个 rank 以及此处选择的策略。</translation>
    </message>
    <message>
        <source>New rank / file</source>
        <translation>新 rank / 文件</translation>
    </message>
    <message>
        <source>Unit</source>
        <translation>单元</translation>
    </message>
    <message>
        <source>Elements</source>
        <translation>元素</translation>
    </message>
    <message>
        <source>Bytes in the file (master · Adam m · Adam v)</source>
        <translation>文件中的字节（主权重 · Adam m · Adam v）</translation>
    </message>
    <message>
        <source>Bytes</source>
        <translation>字节</translation>
    </message>
    <message>
        <source>File</source>
        <translation>文件</translation>
    </message>
    <message>
        <source>Saved by rank</source>
        <translation>保存它的 rank</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>大小</translation>
    </message>
    <message>
        <source>Verification</source>
        <translation>校验</translation>
    </message>
    <message>
        <source>Reads per new rank</source>
        <translation>每个新 rank 的读取</translation>
    </message>
    <message>
        <source>Files</source>
        <translation>文件</translation>
    </message>
    <message>
        <source>A pipeline of %1 stages saved it: each stage&apos;s %2 ranks shared its units.</source>
        <translation>由 %1 个阶段的流水线保存：每个阶段的 %2 个 rank 共同持有该阶段的单元。</translation>
    </message>
</context>
<context>
    <name>shardscope::widgets::ComparePage</name>
    <message>
        <source>cannot read %1: %2</source>
        <translation>无法读取 %1：%2</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <source>Open run or compare reports</source>
        <translation>打开运行报告或对比报告</translation>
    </message>
    <message>
        <source>Reports (*.json);;All files (*)</source>
        <translation>报告 (*.json);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Open reports…</source>
        <translation>打开报告…</translation>
    </message>
    <message>
        <source>Add runs from JSON reports: shardscope-cli run --json, or shardscope-cli compare --json</source>
        <translation>从 JSON 报告添加运行：shardscope-cli run --json 或 shardscope-cli compare --json</translation>
    </message>
    <message>
        <source>Clear</source>
        <translation>清空</translation>
    </message>
    <message>
        <source>Compare</source>
        <translation>对比</translation>
    </message>
    <message numerus="yes">
        <source>Comparison finished: %n strategies</source>
        <translation>
            <numerusform>对比完成：%n 种策略</numerusform>
        </translation>
    </message>
    <message>
        <source>Add the Ranks page&apos;s run</source>
        <translation>加入 Ranks 页的运行</translation>
    </message>
    <message>
        <source>Put the run or recording the Ranks page shows beside these runs</source>
        <translation>把 Ranks 页正在显示的运行或录制放到这些运行旁边</translation>
    </message>
    <message>
        <source>Remove every run from the comparison</source>
        <translation>从对比中移除所有运行</translation>
    </message>
</context>
<context>
    <name>shardscope::widgets::CompareRunner</name>
    <message>
        <source>shardscope-cli was not found at %1: build the shardscope-cli target (it runs the comparison)</source>
        <translation>在 %1 找不到 shardscope-cli：请构建 shardscope-cli 目标（对比由它运行）</translation>
    </message>
    <message>
        <source>cannot create a temporary folder for the report: %1</source>
        <translation>无法为报告创建临时文件夹：%1</translation>
    </message>
    <message>
        <source>Starting shardscope-cli compare…</source>
        <translation>正在启动 shardscope-cli compare…</translation>
    </message>
    <message>
        <source>Stopping…</source>
        <translation>正在停止…</translation>
    </message>
    <message numerus="yes">
        <source>Running %1 on %n rank(s) (%2 of %3)…</source>
        <translation>
            <numerusform>正在 %n 个 rank 上运行 %1（第 %2 个，共 %3 个）…</numerusform>
        </translation>
    </message>
    <message>
        <source>Stopped.</source>
        <translation>已停止。</translation>
    </message>
    <message>
        <source>Comparison stopped</source>
        <translation>对比已停止</translation>
    </message>
    <message>
        <source>shardscope-cli crashed</source>
        <translation>shardscope-cli 崩溃了</translation>
    </message>
    <message>
        <source>shardscope-cli exited with code %1</source>
        <translation>shardscope-cli 以退出码 %1 结束</translation>
    </message>
    <message>
        <source>cannot read the comparison report %1: %2</source>
        <translation>无法读取对比报告 %1：%2</translation>
    </message>
    <message numerus="yes">
        <source>Done: %1 strategies on %n rank(s).</source>
        <translation>
            <numerusform>完成：在 %n 个 rank 上运行了 %1 种策略。</numerusform>
        </translation>
    </message>
    <message>
        <source>cannot start %1: %2</source>
        <translation>无法启动 %1：%2</translation>
    </message>
    <message>
        <source>Run all strategies:</source>
        <translation>运行全部策略：</translation>
    </message>
    <message>
        <source>Ranks</source>
        <translation>rank 数</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Steps</source>
        <translation>步数</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <source>Run</source>
        <translation>运行</translation>
    </message>
    <message>
        <source>Run DDP, ZeRO-1, ZeRO-2, ZeRO-3 and FSDP back to back with the same seed (shardscope-cli compare --deterministic) and show them side by side</source>
        <translation>使用相同随机种子依次运行 DDP、ZeRO-1、ZeRO-2、ZeRO-3 和 FSDP（shardscope-cli compare --deterministic），并将结果并排显示</translation>
    </message>
    <message>
        <source>Data-parallel ranks: one mpirun process each</source>
        <translation>数据并行的 rank 数：每个 rank 是一个 mpirun 进程</translation>
    </message>
    <message>
        <source>The GPT preset every strategy trains</source>
        <translation>每种策略训练的 GPT 预设模型</translation>
    </message>
    <message>
        <source>Training steps per strategy</source>
        <translation>每种策略的训练步数</translation>
    </message>
    <message>
        <source>Data-parallel ranks: threads of one worker process</source>
        <translation>数据并行 rank：同一 worker 进程中的线程</translation>
    </message>
    <message>
        <source>As threads (no MPI)</source>
        <translation>以线程运行（无需 MPI）</translation>
    </message>
    <message>
        <source>Run each strategy&apos;s ranks as threads of one shardscope-worker process (shardscope-cli compare --shared-device) instead of mpirun processes</source>
        <translation>把每种策略的各 rank 作为同一个 shardscope-worker 进程中的线程运行（shardscope-cli compare --shared-device），而不是 mpirun 进程</translation>
    </message>
    <message>
        <source>%1: the ranks run as threads of one process (shardscope-cli compare --shared-device)</source>
        <translation>%1：各 rank 作为同一进程中的线程运行（shardscope-cli compare --shared-device）</translation>
    </message>
    <message>
        <source>Tensor parallel (T)</source>
        <translation>张量并行（T）</translation>
    </message>
    <message>
        <source>Run every strategy on a T × D mesh: T consecutive ranks split each block&apos;s computation, the strategy shards over the D = ranks / T data-parallel ranks. T must divide the ranks and the model&apos;s heads (tiny_tp, small_tp: 4).</source>
        <translation>在 T × D 网格上运行每种策略：T 个连续的 rank 切分每个块的计算，策略在 D = rank 数 / T 个数据并行 rank 上分片。T 必须整除 rank 数和模型的注意力头数（tiny_tp、small_tp：4）。</translation>
    </message>
    <message>
        <source>Stop the comparison (the CLI tears its jobs down) (Esc)</source>
        <translation>停止对比（CLI 会终止它的作业）（Esc）</translation>
    </message>
</context>
<context>
    <name>shardscope::widgets::CompareView</name>
    <message>
        <source>cannot read %1: %2</source>
        <translation>无法读取 %1：%2</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <source>reference (DDP)</source>
        <translation>基准（DDP）</translation>
    </message>
    <message>
        <source>bitwise equal to DDP</source>
        <translation>与 DDP 逐位相同</translation>
    </message>
    <message>
        <source>max |Δ| vs DDP = %1</source>
        <translation>与 DDP 的最大 |Δ| = %1</translation>
    </message>
    <message>
        <source>bitwise equal to DDP (same weight digest)</source>
        <translation>与 DDP 逐位相同（权重摘要一致）</translation>
    </message>
    <message>
        <source>weights differ from DDP (digest)</source>
        <translation>权重与 DDP 不同（摘要不一致）</translation>
    </message>
    <message>
        <source>no DDP run to compare with</source>
        <translation>没有可供对比的 DDP 运行</translation>
    </message>
    <message>
        <source>Compare: open a compare report (shardscope-cli compare --json FILE) or several run reports.</source>
        <translation>对比：请打开对比报告（shardscope-cli compare --json FILE）或多个运行报告。</translation>
    </message>
    <message>
        <source>Rank ledgers: model states per rank by category, grouped by strategy</source>
        <translation>rank 账本：每个 rank 按类别的模型状态，按策略分组</translation>
    </message>
    <message>
        <source>bytes per rank (%1)</source>
        <translation>每个 rank 的字节数（%1）</translation>
    </message>
    <message>
        <source>r%1</source>
        <translation>r%1</translation>
    </message>
    <message>
        <source>measured peak</source>
        <translation>实测峰值</translation>
    </message>
    <message>
        <source>theory: model states</source>
        <translation>理论：模型状态</translation>
    </message>
    <message>
        <source>Peak bytes per rank</source>
        <translation>每个 rank 的峰值字节数</translation>
    </message>
    <message>
        <source>peak (%1)</source>
        <translation>峰值（%1）</translation>
    </message>
    <message>
        <source>rank</source>
        <translation>rank</translation>
    </message>
    <message>
        <source>Communication per rank per step</source>
        <translation>每个 rank 每步的通信量</translation>
    </message>
    <message>
        <source>bytes sent (%1)</source>
        <translation>发送字节数（%1）</translation>
    </message>
    <message>
        <source>theory</source>
        <translation>理论值</translation>
    </message>
    <message>
        <source>Final weights:</source>
        <translation>最终权重：</translation>
    </message>
    <message>
        <source>Exposed communication (worst rank, median step):</source>
        <translation>暴露通信（等待最多的 rank，各步中位数）：</translation>
    </message>
    <message>
        <source>%1: rank %2 waits most, %3 of its step (median over the steps).</source>
        <translation>%1：rank %2 等待最多，占其步时间的 %3（各步中位数）。</translation>
    </message>
    <message>
        <source>%1: %2 of the step for the rank that waits most (median over the steps).</source>
        <translation>%1：等待最多的 rank 占步时间的 %2（各步中位数）。</translation>
    </message>
    <message>
        <source>r%1 %2</source>
        <translation>r%1 %2</translation>
    </message>
    <message>
        <source>Per rank: %1.</source>
        <translation>各 rank：%1。</translation>
    </message>
    <message>
        <source>no DDP run of the same configuration</source>
        <translation>没有相同配置的 DDP 运行</translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation>%1（%2）</translation>
    </message>
    <message>
        <source>model %1 on %2 ranks, %3 steps, seed %4</source>
        <translation>模型 %1，%2 个 rank，%3 步，随机种子 %4</translation>
    </message>
    <message>
        <source>, data %1</source>
        <translation>，数据 %1</translation>
    </message>
    <message>
        <source>, micro-batch %1 × %2 accumulated</source>
        <translation>，微批 %1 × %2 次累积</translation>
    </message>
    <message>
        <source>Runs: %1 · %2. Bars: measured; ◆ and lines: the theory for the same configuration.</source>
        <translation>运行：%1 · %2。柱形：实测值；◆ 和线条：相同配置下的理论值。</translation>
    </message>
    <message>
        <source>(%1) %2: %3</source>
        <translation>（%1）%2：%3</translation>
    </message>
    <message>
        <source>Runs: %1 in %2 configurations; weights are compared only within one configuration.</source>
        <translation>运行：%1，共 %2 种配置；权重只在同一配置内比较。</translation>
    </message>
    <message>
        <source>Final fp32 master weights of %1 against those of a DDP run of the same configuration (%2). Digest %3.</source>
        <translation>%1 的最终 fp32 主权重与相同配置下 DDP 运行的主权重对比（%2）。摘要 %3。</translation>
    </message>
    <message>
        <source>Nothing to compare yet.

Press Run in the “Run all strategies” row above to train DDP, ZeRO-1, ZeRO-2, ZeRO-3 and FSDP on the same model and see their memory, peaks, communication and final weights side by side, open reports with “Open reports…” (shardscope-cli compare --json FILE, or several run --json files), or add the run the Ranks page shows with “Add the Ranks page&apos;s run”.</source>
        <translation>还没有可对比的内容。

按上方“运行全部策略”一行中的“运行”，在同一模型上训练 DDP、ZeRO-1、ZeRO-2、ZeRO-3 和 FSDP，并排查看它们的内存、峰值、通信和最终权重；或用“打开报告…”打开报告（shardscope-cli compare --json FILE，或多个 run --json 文件）；或用“加入 Ranks 页的运行”加入 Ranks 页正在显示的运行。</translation>
    </message>
    <message>
        <source>theory: dashed, in the run&apos;s colour</source>
        <translation>理论值：虚线，颜色同该运行</translation>
    </message>
    <message>
        <source>P%1</source>
        <translation>P%1</translation>
    </message>
    <message>
        <source>T%1</source>
        <translation>T%1</translation>
    </message>
    <message>
        <source>D%1</source>
        <translation>D%1</translation>
    </message>
</context>
<context>
    <name>shardscope::widgets::ConfigFiles</name>
    <message>
        <source>Import configuration</source>
        <translation>导入配置</translation>
    </message>
    <message>
        <source>DeepSpeed or Accelerate configurations (*.json *.yaml *.yml)</source>
        <translation>DeepSpeed 或 Accelerate 配置 (*.json *.yaml *.yml)</translation>
    </message>
    <message>
        <source>Export for Perfetto</source>
        <translation>导出为 Perfetto 格式</translation>
    </message>
    <message>
        <source>Chrome trace-event JSON (*.json)</source>
        <translation>Chrome 跟踪事件 JSON (*.json)</translation>
    </message>
    <message>
        <source>Export ledger as CSV</source>
        <translation>将账本导出为 CSV</translation>
    </message>
    <message>
        <source>CSV (*.csv)</source>
        <translation>CSV (*.csv)</translation>
    </message>
    <message>
        <source>Imported %1</source>
        <translation>已导入 %1</translation>
    </message>
    <message>
        <source>%1 settings applied to the run settings, %2 listed as ignored (with why):</source>
        <translation>%1 项设置已应用到运行设置，%2 项列为已忽略（附原因）：</translation>
    </message>
    <message>
        <source>nothing to export: run a job or open a recording first</source>
        <translation>没有可导出的内容：请先运行任务或打开录制文件</translation>
    </message>
    <message>
        <source>&amp;Import configuration (DeepSpeed / Accelerate)…</source>
        <translation>导入配置（DeepSpeed / Accelerate）(&amp;I)…</translation>
    </message>
    <message>
        <source>Export for &amp;Perfetto…</source>
        <translation>导出为 Perfetto 格式(&amp;P)…</translation>
    </message>
    <message>
        <source>Export ledger as &amp;CSV…</source>
        <translation>将账本导出为 CSV(&amp;C)…</translation>
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
    <message>
        <source>Why they differ: DeepSpeed budgets 18 B/param for ZeRO-3: 2 B of 16-bit parameters and 16 B in fp32 — master weights, Adam m and v, and an fp32 copy of the gradient shard that its optimizer step makes (freed after each update; a CPU buffer kept all along when the optimizer is offloaded). It leaves out the 2 B 16-bit gradient shard it also keeps, adds 4 B × the largest layer on every GPU for the gathered layer, and multiplies every CPU figure by additional_buffer_factor = 1.5. ShardScope&apos;s AdamW reads the bf16 gradient shard and keeps no fp32 gradient: it counts the bytes kept between steps (2 + 2 + 12, padded shards) and reports gathered units and buckets in the peak, not in model states.</source>
        <translation>差异原因：DeepSpeed 为 ZeRO-3 按每参数 18 B 计算：16 位参数 2 B，加上 fp32 的 16 B——主权重、Adam 的 m 和 v，以及其优化器步骤生成的梯度分片 fp32 副本（每次更新后释放；优化器卸载时则是一直保留的 CPU 缓冲区）。它没有计入同样保留的 2 B 16 位梯度分片，在每个 GPU 上为收集的层加上 4 B × 最大层，并把每个 CPU 数值乘以 additional_buffer_factor = 1.5。ShardScope 的 AdamW 直接读取 bf16 梯度分片，不保留 fp32 梯度：它统计步骤之间保留的字节（2 + 2 + 12，分片含填充），收集的单元和桶计入峰值，而不计入模型状态。</translation>
    </message>
    <message>
        <source>Why they differ: DeepSpeed&apos;s ZeRO-2 estimate keeps the 16-bit parameters whole on every GPU (2 B/param) plus 18 B/param of partitioned state — 16-bit gradients 2, an fp32 gradient copy 4 (made during the optimizer step; kept on the CPU under offload), fp32 parameters 4 and Adam m, v 8 — and multiplies every CPU figure by additional_buffer_factor = 1.5 (with ≥ 16 B/param on the host under offload). ShardScope keeps no fp32 gradient and counts only what this implementation keeps between steps, shard by shard.</source>
        <translation>差异原因：DeepSpeed 的 ZeRO-2 估算在每个 GPU 上保留完整的 16 位参数（每参数 2 B），另加每参数 18 B 的分区状态——16 位梯度 2、fp32 梯度副本 4（在优化器步骤中生成；卸载时保留在 CPU 上）、fp32 参数 4、Adam 的 m 和 v 共 8——并把每个 CPU 数值乘以 additional_buffer_factor = 1.5（卸载时主机上至少每参数 16 B）。ShardScope 不保留 fp32 梯度，只逐分片统计本实现在步骤之间保留的字节。</translation>
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
    <name>shardscope::widgets::ExplainPanel</name>
    <message>
        <source>What is happening</source>
        <translation>正在发生什么</translation>
    </message>
    <message>
        <source>Glossary</source>
        <translation>术语表</translation>
    </message>
    <message>
        <source>Show the ZeRO / FSDP terms used here; terms in the sentence link to their entries</source>
        <translation>显示这里用到的 ZeRO / FSDP 术语；句子中的术语链接到对应条目</translation>
    </message>
</context>
<context>
    <name>shardscope::widgets::FlowPage</name>
    <message>
        <source>Flows</source>
        <translation>数据流</translation>
    </message>
    <message>
        <source>TP beside ZeRO</source>
        <translation>TP 与 ZeRO 对照</translation>
    </message>
    <message>
        <source>Show the tensor-parallel all-reduce nearest the playhead (partial sums → the full activation, over a TP group) next to ZeRO&apos;s all-gather (shards → full parameters, over a DP group)</source>
        <translation>在 ZeRO 的 all-gather（分片 → 完整参数，在 DP 组内）旁边显示离播放头最近的张量并行 all-reduce（部分和 → 完整激活值，在 TP 组内）</translation>
    </message>
</context>
<context>
    <name>shardscope::widgets::FlowView</name>
    <message>
        <source>shard only</source>
        <translation>仅有分片</translation>
    </message>
    <message>
        <source>unsharding (all-gather)</source>
        <translation>收集中（all-gather）</translation>
    </message>
    <message>
        <source>full parameters</source>
        <translation>完整参数</translation>
    </message>
    <message>
        <source>computing %1</source>
        <translation>%1计算中</translation>
    </message>
    <message>
        <source>resharded (full freed)</source>
        <translation>已重新分片（完整参数已释放）</translation>
    </message>
    <message>
        <source>reduce-scattering</source>
        <translation>reduce-scatter 中</translation>
    </message>
    <message>
        <source>gradient shard summed</source>
        <translation>梯度分片已求和</translation>
    </message>
    <message>
        <source>all-reducing</source>
        <translation>all-reduce 中</translation>
    </message>
    <message>
        <source>gradient summed</source>
        <translation>梯度已求和</translation>
    </message>
    <message>
        <source>the gradient norm</source>
        <translation>梯度范数</translation>
    </message>
    <message>
        <source>unit %1</source>
        <translation>单元 %1</translation>
    </message>
    <message>
        <source>for its %1</source>
        <translation>用于其%1</translation>
    </message>
    <message>
        <source>step %1</source>
        <translation>第 %1 步</translation>
    </message>
    <message>
        <source>done</source>
        <translation>已完成</translation>
    </message>
    <message>
        <source>%1 shards of %2 become %3 of full parameters on every rank; each rank sends %4.</source>
        <translation>%1 个 %2 的分片在每个 rank 上合成 %3 的完整参数；每个 rank 发送 %4。</translation>
    </message>
    <message>
        <source>Every rank&apos;s %1 gradient is cut into %2 chunks of %3; chunk j is summed over all ranks into rank j&apos;s shard; each rank sends %4.</source>
        <translation>每个 rank 的 %1 梯度被切成 %2 块、每块 %3；第 j 块在所有 rank 上求和后存入 rank j 的分片；每个 rank 发送 %4。</translation>
    </message>
    <message>
        <source>Every rank contributes %1 and ends with the same sum; each rank sends %2 (2(N−1)/N of it).</source>
        <translation>每个 rank 贡献 %1，最终都得到相同的总和；每个 rank 发送 %2（它的 2(N−1)/N）。</translation>
    </message>
    <message>
        <source>One rank sends %1 to every other rank.</source>
        <translation>一个 rank 把 %1 发送给其他所有 rank。</translation>
    </message>
    <message>
        <source>rank %1</source>
        <translation>rank %1</translation>
    </message>
    <message>
        <source>each rank&apos;s shard</source>
        <translation>每个 rank 的分片</translation>
    </message>
    <message>
        <source>summed gradient shard</source>
        <translation>已求和的梯度分片</translation>
    </message>
    <message>
        <source>each rank&apos;s buffer</source>
        <translation>每个 rank 的缓冲区</translation>
    </message>
    <message>
        <source>after: the sum on every rank</source>
        <translation>之后：每个 rank 上的总和</translation>
    </message>
    <message>
        <source>Gradient cycle:</source>
        <translation>梯度周期：</translation>
    </message>
    <message>
        <source>Unit cycle:</source>
        <translation>单元周期：</translation>
    </message>
    <message>
        <source>No collective yet at this point of the replay: the flows appear with the first all-gather, reduce-scatter or all-reduce.</source>
        <translation>回放到这里还没有集合通信：数据流会在第一次 all-gather、reduce-scatter 或 all-reduce 时出现。</translation>
    </message>
    <message>
        <source>No run yet: start a run or open a recording, then play it.</source>
        <translation>尚无运行：请开始运行或打开录制文件，然后播放。</translation>
    </message>
    <message>
        <source>prefetched while %1 computes</source>
        <translation>在 %1 计算时预取</translation>
    </message>
    <message>
        <source> (ranks: %1)</source>
        <translation>（rank 数：%1）</translation>
    </message>
    <message>
        <source>gradients computed</source>
        <translation>梯度已计算</translation>
    </message>
    <message>
        <source>own slice updated</source>
        <translation>自己的切片已更新</translation>
    </message>
    <message>
        <source>all-gathering updates</source>
        <translation>all-gather 更新中</translation>
    </message>
    <message>
        <source>all parameters updated</source>
        <translation>全部参数已更新</translation>
    </message>
    <message>
        <source>own part of the norm</source>
        <translation>自己那部分范数</translation>
    </message>
    <message>
        <source>global norm known</source>
        <translation>已得到全局范数</translation>
    </message>
    <message>
        <source>updated parameters of several units (one bucket)</source>
        <translation>多个单元的已更新参数（一个桶）</translation>
    </message>
    <message>
        <source>gradients of several units (one bucket)</source>
        <translation>多个单元的梯度（一个桶）</translation>
    </message>
    <message>
        <source>after the optimizer step</source>
        <translation>优化器步骤之后</translation>
    </message>
    <message>
        <source>of the backward pass</source>
        <translation>反向传播中</translation>
    </message>
    <message>
        <source>No collective in step %1 so far: the last one, the %2 of step %3, has finished; the flows appear with this step&apos;s first collective.</source>
        <translation>第 %1 步至今还没有集合通信：上一次是第 %3 步的 %2，已经完成；数据流会在本步第一次集合通信时出现。</translation>
    </message>
    <message>
        <source>Every rank contributes its part of the squared gradient norm (%1) and ends with the same global norm, so every rank clips its gradients alike.</source>
        <translation>每个 rank 贡献自己那部分梯度范数平方（%1），最终都得到相同的全局范数，因此每个 rank 都以相同方式裁剪梯度。</translation>
    </message>
    <message>
        <source>Each rank updated only its own slice (%1); %2 slices become %3 of updated parameters on every rank; each rank sends %4.</source>
        <translation>每个 rank 只更新了自己的切片（%1）；%2 个切片在每个 rank 上合成 %3 的已更新参数；每个 rank 发送 %4。</translation>
    </message>
    <message>
        <source>each rank&apos;s updated slice</source>
        <translation>每个 rank 已更新的切片</translation>
    </message>
    <message>
        <source>updated parameters on every rank</source>
        <translation>每个 rank 上的已更新参数</translation>
    </message>
    <message>
        <source>full gradients</source>
        <translation>完整梯度</translation>
    </message>
    <message>
        <source>each rank&apos;s part of the norm</source>
        <translation>每个 rank 的那部分范数</translation>
    </message>
    <message>
        <source>after: the global norm on every rank</source>
        <translation>之后：每个 rank 上的全局范数</translation>
    </message>
    <message>
        <source>Gradient norm:</source>
        <translation>梯度范数：</translation>
    </message>
    <message>
        <source>Parameter update:</source>
        <translation>参数更新：</translation>
    </message>
    <message>
        <source>partial input gradient</source>
        <translation>部分输入梯度</translation>
    </message>
    <message>
        <source>partial activation</source>
        <translation>部分激活值</translation>
    </message>
    <message>
        <source>all-reducing (TP group)</source>
        <translation>all-reduce 中（TP 组）</translation>
    </message>
    <message>
        <source>full input gradient</source>
        <translation>完整输入梯度</translation>
    </message>
    <message>
        <source>full activation</source>
        <translation>完整激活值</translation>
    </message>
    <message>
        <source>%1&apos;s input gradient</source>
        <translation>%1 的输入梯度</translation>
    </message>
    <message>
        <source>%1&apos;s output activation</source>
        <translation>%1 的输出激活值</translation>
    </message>
    <message>
        <source>nearest (done)</source>
        <translation>最近一次（已完成）</translation>
    </message>
    <message>
        <source>This recording has no tensor-parallel all-reduce (run with T &gt; 1).</source>
        <translation>此录制文件中没有张量并行 all-reduce（请以 T &gt; 1 运行）。</translation>
    </message>
    <message>
        <source>This recording has no data-parallel collective (D = 1: nothing to shard over).</source>
        <translation>此录制文件中没有数据并行集合通信（D = 1：没有可分片的对象）。</translation>
    </message>
    <message>
        <source>In each data-parallel group, %1 shards of %2 become %3 of full parameters (one TP slice of the unit); each rank sends %4. Each rank then computes the whole slice on its own samples: the storage is split.</source>
        <translation>在每个数据并行组中，%1 个 %2 的分片合成 %3 的完整参数（该单元的一个 TP 切片）；每个 rank 发送 %4。随后每个 rank 在自己的样本上计算整个切片：切分的是存储。</translation>
    </message>
    <message>
        <source>Each of the %1 TP ranks computed the input gradient from its own heads / MLP columns: %2 of partial sums, added into the full input gradient on each; each rank sends %3 (2(T−1)/T). The computation is split, nothing is sharded.</source>
        <translation>%1 个 TP rank 各自用自己的注意力头 / MLP 列计算了输入梯度：%2 的部分和，在每个 rank 上相加得到完整输入梯度；每个 rank 发送 %3（2(T−1)/T）。切分的是计算，没有任何分片。</translation>
    </message>
    <message>
        <source>Each of the %1 TP ranks computed the output from its own heads / MLP columns: %2 of partial sums, added into the full activation on each; each rank sends %3 (2(T−1)/T). The computation is split, nothing is sharded.</source>
        <translation>%1 个 TP rank 各自用自己的注意力头 / MLP 列计算了输出：%2 的部分和，在每个 rank 上相加得到完整激活值；每个 rank 发送 %3（2(T−1)/T）。切分的是计算，没有任何分片。</translation>
    </message>
    <message>
        <source>each rank&apos;s partial input gradient (its heads / columns)</source>
        <translation>每个 rank 的部分输入梯度（其注意力头 / 列）</translation>
    </message>
    <message>
        <source>after: the full input gradient on every rank of the TP group</source>
        <translation>之后：TP 组内每个 rank 上的完整输入梯度</translation>
    </message>
    <message>
        <source>each rank&apos;s partial activation (its heads / columns)</source>
        <translation>每个 rank 的部分激活值（其注意力头 / 列）</translation>
    </message>
    <message>
        <source>after: the full activation on every rank of the TP group</source>
        <translation>之后：TP 组内每个 rank 上的完整激活值</translation>
    </message>
    <message>
        <source>TP group %1: ranks %2</source>
        <translation>TP 组 %1：rank %2</translation>
    </message>
    <message>
        <source>DP group %1: ranks %2</source>
        <translation>DP 组 %1：rank %2</translation>
    </message>
    <message>
        <source>group %1: ranks %2</source>
        <translation>组 %1：rank %2</translation>
    </message>
    <message>
        <source>Tensor parallelism:</source>
        <translation>张量并行：</translation>
    </message>
    <message>
        <source>A pipeline stage hands the gradient of its input, %1, back to the previous stage: one message between two ranks, nothing summed or sharded.</source>
        <translation>流水线阶段把其输入的梯度（%1）交还给上一个阶段：两个 rank 之间的一条消息，不求和，也不分片。</translation>
    </message>
    <message>
        <source>A pipeline stage hands its output activations, %1, to the next stage: one message between two ranks, nothing summed or sharded.</source>
        <translation>流水线阶段把其输出激活（%1）交给下一个阶段：两个 rank 之间的一条消息，不求和，也不分片。</translation>
    </message>
    <message>
        <source>A pipeline stage waits for %1 from its neighbour: the time until it arrives is the stage&apos;s share of the bubble.</source>
        <translation>流水线阶段等待相邻阶段发来的 %1：等到它到达的这段时间，就是本阶段在气泡中所占的部分。</translation>
    </message>
    <message>
        <source>stage %1: other units</source>
        <translation>阶段 %1：其他单元</translation>
    </message>
    <message>
        <source>stage %1</source>
        <translation>阶段 %1</translation>
    </message>
    <message>
        <source>the sending stage&apos;s activation or gradient</source>
        <translation>发送阶段的激活值或梯度</translation>
    </message>
    <message>
        <source>after: the same bytes on the receiving stage (nothing summed)</source>
        <translation>之后：接收阶段得到同样的字节（不做求和）</translation>
    </message>
</context>
<context>
    <name>shardscope::widgets::LessonPlayer</name>
    <message>
        <source>another run replaced the one this step explains: press Back and Next to load it again</source>
        <translation>另一次运行替换了本步骤讲解的运行：请点击“上一步”和“下一步”重新加载</translation>
    </message>
    <message>
        <source>the recording holds no steps</source>
        <translation>该录制文件中没有任何训练步</translation>
    </message>
    <message>
        <source>&amp;Lessons</source>
        <translation>课程(&amp;L)</translation>
    </message>
    <message>
        <source>Back</source>
        <translation>上一步</translation>
    </message>
    <message>
        <source>Close lesson</source>
        <translation>关闭课程</translation>
    </message>
    <message>
        <source>Next</source>
        <translation>下一步</translation>
    </message>
    <message>
        <source>Finish</source>
        <translation>完成</translation>
    </message>
    <message>
        <source>Lesson: %1</source>
        <translation>课程：%1</translation>
    </message>
    <message>
        <source>Step %1 of %2</source>
        <translation>步骤 %1 / %2</translation>
    </message>
    <message>
        <source>this window has no Ranks page</source>
        <translation>此窗口没有 Rank 视图页面</translation>
    </message>
    <message>
        <source>a run is in progress: stop it, then press Back and Next to repeat this step</source>
        <translation>有运行正在进行：请先停止它，再点击“上一步”和“下一步”重复本步骤</translation>
    </message>
    <message>
        <source>the bundled recording %1 cannot be read</source>
        <translation>无法读取内置录制文件 %1</translation>
    </message>
    <message>
        <source>the bundled recording %1 cannot be opened</source>
        <translation>无法打开内置录制文件 %1</translation>
    </message>
    <message>
        <source>this window has no page &apos;%1&apos;</source>
        <translation>此窗口没有页面“%1”</translation>
    </message>
    <message>
        <source>this window has no element &apos;%1&apos; to point at</source>
        <translation>此窗口中没有可指向的元素“%1”</translation>
    </message>
    <message>
        <source>the bundled recording %1 has no report</source>
        <translation>内置录制 %1 没有报告</translation>
    </message>
</context>
<context>
    <name>shardscope::widgets::LossChart</name>
    <message>
        <source>Training loss per step (rank 0)</source>
        <translation>每步训练损失（rank 0）</translation>
    </message>
    <message>
        <source>step</source>
        <translation>步</translation>
    </message>
    <message>
        <source>loss</source>
        <translation>损失</translation>
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
    <message>
        <source>Ranks</source>
        <translation>Rank 视图</translation>
    </message>
</context>
<context>
    <name>shardscope::widgets::MeasuredVsTheoryChart</name>
    <message>
        <source>Rank %1: measured vs theory, by category</source>
        <translation>Rank %1：实测与理论对比（按类别）</translation>
    </message>
    <message>
        <source>bytes per rank</source>
        <translation>每个 rank 的字节数</translation>
    </message>
    <message>
        <source>measured (final report)</source>
        <translation>实测（最终报告）</translation>
    </message>
    <message>
        <source>measured (end of last step)</source>
        <translation>实测（最后一步结束时）</translation>
    </message>
    <message>
        <source>theory (handshake)</source>
        <translation>理论（握手信息）</translation>
    </message>
</context>
<context>
    <name>shardscope::widgets::MemoryTimelineChart</name>
    <message>
        <source>Memory of rank %1 over the run (stacked by category)</source>
        <translation>rank %1 在运行过程中的内存（按类别堆叠）</translation>
    </message>
    <message>
        <source>time in the run (ms, steps back to back)</source>
        <translation>运行时间（毫秒，各步首尾相接）</translation>
    </message>
    <message>
        <source>live bytes</source>
        <translation>实时字节数</translation>
    </message>
</context>
<context>
    <name>shardscope::widgets::MeshChart</name>
    <message>
        <source>Per rank (%1)</source>
        <translation>每个 rank（%1）</translation>
    </message>
    <message>
        <source>T = %1 × D = %2</source>
        <translation>T = %1 × D = %2</translation>
    </message>
    <message>
        <source>%1: model states per rank on the device for each P × T × D = %2 (P &gt; 1: the fullest stage)</source>
        <translation>%1：每种 P × T × D = %2 下每个 rank 在设备上的模型状态（P &gt; 1 时为最满的阶段）</translation>
    </message>
    <message>
        <source>Model states per rank on the device for each P × T × D</source>
        <translation>每种 P × T × D 下每个 rank 在设备上的模型状态</translation>
    </message>
    <message>
        <source>P = %1 × T = %2 × D = %3</source>
        <translation>P = %1 × T = %2 × D = %3</translation>
    </message>
    <message>
        <source>pipeline stages P × tensor parallel T × data parallel D</source>
        <translation>流水线阶段 P × 张量并行 T × 数据并行 D</translation>
    </message>
</context>
<context>
    <name>shardscope::widgets::PaletteLegend</name>
    <message>
        <source>Colours here:</source>
        <translation>此处的颜色：</translation>
    </message>
</context>
<context>
    <name>shardscope::widgets::PeakBreakdown</name>
    <message>
        <source>Model states (shard)</source>
        <translation>模型状态（分片）</translation>
    </message>
    <message>
        <source>Activations</source>
        <translation>激活值</translation>
    </message>
    <message>
        <source>Gathered unit(s)</source>
        <translation>已收集的单元</translation>
    </message>
    <message>
        <source>Full gradients in flight</source>
        <translation>待规约的完整梯度</translation>
    </message>
    <message>
        <source>Communication buffers</source>
        <translation>通信缓冲区</translation>
    </message>
    <message>
        <source>Workspace</source>
        <translation>工作区</translation>
    </message>
    <message>
        <source>what the strategy keeps between steps: the device rows of the model-state derivation</source>
        <translation>策略在两步之间保留的内容：模型状态推导中的设备行</translation>
    </message>
    <message>
        <source>tensors saved for backward that are still live at the peak (%1)</source>
        <translation>为反向传播保存、在峰值时仍存活的张量（%1）</translation>
    </message>
    <message>
        <source>not predicted: a bare parameter count has no shape</source>
        <translation>不预测：仅有参数量时没有模型结构</translation>
    </message>
    <message>
        <source>none: %1 keeps full parameters as a model state</source>
        <translation>无：%1 把完整参数作为模型状态保存</translation>
    </message>
    <message>
        <source>largest unit %1 params × (1 + prefetch %2) × %3 B/param, at most %4</source>
        <translation>最大单元 %1 参数 × (1 + 预取 %2) × 每参数 %3 B，至多 %4</translation>
    </message>
    <message>
        <source>full gradients of the units in backward, not yet reduce-scattered</source>
        <translation>反向传播中各单元尚未 reduce-scatter 的完整梯度</translation>
    </message>
    <message>
        <source>buckets and staging buffers of the collectives in flight</source>
        <translation>进行中的集合通信所用的桶和中转缓冲区</translation>
    </message>
    <message>
        <source>kernel scratch live at the peak</source>
        <translation>峰值时仍存活的算子临时内存</translation>
    </message>
    <message>
        <source>Predicted device peak %1 (%2) = model states + activations + gathered unit(s) + buffers + workspace, from a dry run of one step.</source>
        <translation>预测设备峰值 %1（%2）= 模型状态 + 激活值 + 已收集的单元 + 缓冲区 + 工作区，来自单步试运行。</translation>
    </message>
    <message>
        <source>A bare parameter count has no model shape, so this peak assumes: no activations and no workspace (not predicted), and the whole model as one unit for the gathered bytes. Choose a preset with a shape for a dry-run peak.</source>
        <translation>仅有参数量时没有模型结构，因此该峰值假设：没有激活值和工作区（不预测），并把整个模型视为一个单元来计算收集的字节数。选择带模型结构的预设可得到试运行峰值。</translation>
    </message>
    <message>
        <source>Term</source>
        <translation>项</translation>
    </message>
    <message>
        <source>Formula</source>
        <translation>公式</translation>
    </message>
    <message>
        <source>Bytes</source>
        <translation>字节</translation>
    </message>
    <message>
        <source>Predicted device peak</source>
        <translation>预测设备峰值</translation>
    </message>
    <message>
        <source>shard + activations + gathered unit(s) + buffers + workspace</source>
        <translation>分片 + 激活值 + 已收集的单元 + 缓冲区 + 工作区</translation>
    </message>
    <message>
        <source>No peak prediction for this scenario.</source>
        <translation>此场景没有峰值预测。</translation>
    </message>
</context>
<context>
    <name>shardscope::widgets::PipelineChart</name>
    <message>
        <source>Pipeline stages P</source>
        <translation>流水线级数 P</translation>
    </message>
    <message>
        <source>Chunks per rank V (interleaved)</source>
        <translation>每个 rank 的模型块数 V（交错）</translation>
    </message>
    <message>
        <source>micro-batches per step M</source>
        <translation>每步微批次数 M</translation>
    </message>
    <message>
        <source>bubble (% of the step)</source>
        <translation>气泡（占一步的 %）</translation>
    </message>
    <message>
        <source>Bubble: GPipe and 1F1B (P − 1)/(M + P − 1); interleaved (P − 1)/(V·M + P − 1), M a multiple of P; ZB-H1 (P − 1)/(3M + P − 1) at equal F, B and W, once M ≥ P. Activations each stage holds at once: GPipe all M micro-batches; 1F1B at most P − s on stage s; ZB-H1 up to P, until their weight gradients; interleaved 2(P − s − 1) + (V − 1)·P + 1 chunks. For a model shape: shardscope-cli estimate --pp.</source>
        <translation>气泡：GPipe 与 1F1B 为 (P − 1)/(M + P − 1)；交错调度为 (P − 1)/(V·M + P − 1)，M 须为 P 的倍数；ZB-H1 在 F、B、W 耗时相等且 M ≥ P 时为 (P − 1)/(3M + P − 1)。每级同时保存的激活：GPipe 保存全部 M 个微批次；1F1B 在第 s 级最多 P − s 个；ZB-H1 最多 P 个，直到其权重梯度算完；交错调度 2(P − s − 1) + (V − 1)·P + 1 个模型块。针对具体模型形状：shardscope-cli estimate --pp。</translation>
    </message>
    <message>
        <source>Pipeline bubble: the share of a step each of P = %1 stages waits</source>
        <translation>流水线气泡：P = %1 级中每级在一步里等待的时间占比</translation>
    </message>
    <message>
        <source>GPipe and 1F1B</source>
        <translation>GPipe 与 1F1B</translation>
    </message>
    <message>
        <source>interleaved 1F1B (V = %1)</source>
        <translation>交错 1F1B（V = %1）</translation>
    </message>
    <message>
        <source>ZB-H1 (F = B = W)</source>
        <translation>ZB-H1（F = B = W）</translation>
    </message>
</context>
<context>
    <name>shardscope::widgets::PlaybackBar</name>
    <message>
        <source>event ›</source>
        <translation>事件 ›</translation>
    </message>
    <message>
        <source>‹ event</source>
        <translation>‹ 事件</translation>
    </message>
    <message>
        <source>unit ▸</source>
        <translation>单元 ▸</translation>
    </message>
    <message>
        <source>◂ unit</source>
        <translation>◂ 单元</translation>
    </message>
    <message>
        <source>phase ▸▸</source>
        <translation>阶段 ▸▸</translation>
    </message>
    <message>
        <source>◂◂ phase</source>
        <translation>◂◂ 阶段</translation>
    </message>
    <message>
        <source>Next event, any rank (→)</source>
        <translation>下一个事件，任意 rank（→）</translation>
    </message>
    <message>
        <source>Previous event, any rank (←)</source>
        <translation>上一个事件，任意 rank（←）</translation>
    </message>
    <message>
        <source>Next unit: where the focus rank starts work on another unit (Shift+→)</source>
        <translation>下一个单元：关注的 rank 开始处理另一个单元的位置（Shift+→）</translation>
    </message>
    <message>
        <source>Previous unit boundary of the focus rank (Shift+←)</source>
        <translation>关注 rank 的上一个单元边界（Shift+←）</translation>
    </message>
    <message>
        <source>Next phase: forward → backward → optimizer, on the focus rank (Ctrl+→)</source>
        <translation>下一个阶段：前向 → 反向 → 优化器，以关注的 rank 为准（Ctrl+→）</translation>
    </message>
    <message>
        <source>Previous phase change of the focus rank (Ctrl+←)</source>
        <translation>关注 rank 的上一次阶段切换（Ctrl+←）</translation>
    </message>
    <message>
        <source>Start of the next step (Page Down)</source>
        <translation>下一步的开头（Page Down）</translation>
    </message>
    <message>
        <source>Start of this or the previous step (Page Up)</source>
        <translation>本步或上一步的开头（Page Up）</translation>
    </message>
    <message>
        <source>speed %1×</source>
        <translation>速度 %1×</translation>
    </message>
    <message>
        <source> · step %1</source>
        <translation> · 第 %1 步</translation>
    </message>
    <message>
        <source>event %1 / %2</source>
        <translation>事件 %1 / %2</translation>
    </message>
    <message>
        <source>Pause</source>
        <translation>暂停</translation>
    </message>
    <message>
        <source>Play</source>
        <translation>播放</translation>
    </message>
    <message>
        <source>Play or pause the replay (Space)</source>
        <translation>播放或暂停回放（空格）</translation>
    </message>
    <message>
        <source>focus rank</source>
        <translation>关注 rank</translation>
    </message>
    <message>
        <source>Unit and phase steps follow this rank (ranks reach each boundary at slightly different times)</source>
        <translation>按单元和阶段单步时以该 rank 为准（各 rank 到达边界的时间略有不同）</translation>
    </message>
    <message>
        <source>Loop</source>
        <translation>循环</translation>
    </message>
    <message>
        <source>Start again from the beginning when the replay reaches the end</source>
        <translation>回放到结尾时从头开始</translation>
    </message>
    <message>
        <source>Drag to scrub through every event of the run</source>
        <translation>拖动以浏览本次运行的每个事件</translation>
    </message>
    <message>
        <source>Replay speed, 0.1× to 100× of the default pace (one step in about %1 s)</source>
        <translation>回放速度，为默认节奏（每步约 %1 秒）的 0.1× 到 100×</translation>
    </message>
    <message>
        <source>step ▸|</source>
        <translation>步 ▸|</translation>
    </message>
    <message>
        <source>|◂ step</source>
        <translation>|◂ 步</translation>
    </message>
    <message>
        <source>Follow live</source>
        <translation>跟随实时</translation>
    </message>
    <message>
        <source>Keep up with the running job: jump to each new step as it arrives and play it</source>
        <translation>跟上正在运行的作业：每当新的一步到达就跳转过去并播放</translation>
    </message>
</context>
<context>
    <name>shardscope::widgets::Presentation</name>
    <message>
        <source>&amp;Presentation (large text for a projector)</source>
        <translation>演示模式（投影仪大字）(&amp;P)</translation>
    </message>
</context>
<context>
    <name>shardscope::widgets::RankLedgerView</name>
    <message>
        <source>No run yet. Press Run to train real sharded steps, or open a recording (.sstrace).</source>
        <translation>还没有运行。点击“运行”来训练真实的分片训练步，或打开录制文件（.sstrace）。</translation>
    </message>
    <message>
        <source>Units under each bar:</source>
        <translation>每根柱下方的单元：</translation>
    </message>
    <message>
        <source>computing</source>
        <translation>正在计算</translation>
    </message>
    <message>
        <source>peak %1</source>
        <translation>峰值 %1</translation>
    </message>
    <message>
        <source>rank %1 · %2</source>
        <translation>rank %1 · %2</translation>
    </message>
    <message>
        <source>theory: peak</source>
        <translation>理论：峰值</translation>
    </message>
    <message>
        <source>capacity</source>
        <translation>容量</translation>
    </message>
    <message>
        <source>The run ended early: %1</source>
        <translation>运行提前结束：%1</translation>
    </message>
    <message>
        <source>%1 %2</source>
        <translation>%1 %2</translation>
    </message>
    <message>
        <source>&lt;b&gt;Rank %1&lt;/b&gt;: %2 live, peak %3</source>
        <translation>&lt;b&gt;Rank %1&lt;/b&gt;：实时 %2，峰值 %3</translation>
    </message>
    <message>
        <source>Now: %1</source>
        <translation>当前：%1</translation>
    </message>
    <message>
        <source>Rank %1 failed %2: %3</source>
        <translation>Rank %1 %2失败：%3</translation>
    </message>
    <message>
        <source>theory per tier</source>
        <translation>各层级理论值</translation>
    </message>
    <message>
        <source>theory: device peak</source>
        <translation>理论：设备峰值</translation>
    </message>
    <message>
        <source>device capacity</source>
        <translation>设备容量</translation>
    </message>
    <message>
        <source>%1: %2 live, peak %3, model states %4</source>
        <translation>%1：实时 %2，峰值 %3，模型状态 %4</translation>
    </message>
    <message>
        <source>(theory %1)</source>
        <translation>（理论 %1）</translation>
    </message>
    <message>
        <source>its shard only</source>
        <translation>仅本 rank 分片</translation>
    </message>
    <message>
        <source>gathered: whole unit</source>
        <translation>已收集：整个单元</translation>
    </message>
    <message>
        <source>stage %1</source>
        <translation>阶段 %1</translation>
    </message>
    <message>
        <source>theory: stage %1 peak</source>
        <translation>理论：阶段 %1 峰值</translation>
    </message>
    <message>
        <source>held by another stage</source>
        <translation>由其他阶段持有</translation>
    </message>
    <message>
        <source>%1 … %2</source>
        <translation>%1 … %2</translation>
    </message>
    <message>
        <source>%1 · %2 · theory peak %3</source>
        <translation>%1 · %2 · 理论峰值 %3</translation>
    </message>
    <message>
        <source>%1 · %2</source>
        <translation>%1 · %2</translation>
    </message>
    <message>
        <source>TP group %1 (DP rank %2)</source>
        <translation>TP 组 %1（DP rank %2）</translation>
    </message>
    <message>
        <source>theory: stage %1 device peak</source>
        <translation>理论：阶段 %1 设备峰值</translation>
    </message>
    <message>
        <source>Pipeline stage %1 of %2: units %3, theory peak %4</source>
        <translation>流水线阶段 %1（共 %2 个）：单元 %3，理论峰值 %4</translation>
    </message>
</context>
<context>
    <name>shardscope::widgets::RanksPage</name>
    <message>
        <source>Invalid settings: %1</source>
        <translation>设置无效：%1</translation>
    </message>
    <message>
        <source>Open a recording</source>
        <translation>打开录制文件</translation>
    </message>
    <message>
        <source>ShardScope recordings (*.sstrace);;All files (*)</source>
        <translation>ShardScope 录制文件 (*.sstrace);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Starting %1 ranks…</source>
        <translation>正在启动 %1 个 rank…</translation>
    </message>
    <message>
        <source>Reading the recording…</source>
        <translation>正在读取录制文件…</translation>
    </message>
    <message>
        <source>step %1 of %2 · event %3 of %4</source>
        <translation>第 %1/%2 步 · 事件 %3/%4</translation>
    </message>
    <message>
        <source>%1 s</source>
        <translation>%1 秒</translation>
    </message>
    <message>
        <source>Ranks: what every rank holds, step by step</source>
        <translation>Rank 视图：每个 rank 逐步持有的内容</translation>
    </message>
    <message>
        <source>slow motion %1× (a step ≈ %2 s)</source>
        <translation>慢放 %1 倍（每步约 %2 秒）</translation>
    </message>
    <message>
        <source>slow motion %1×</source>
        <translation>慢放 %1 倍</translation>
    </message>
    <message>
        <source>Settings for the next run</source>
        <translation>下一次运行的设置</translation>
    </message>
    <message>
        <source>Run</source>
        <translation>运行</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <source>Open recording…</source>
        <translation>打开录制文件…</translation>
    </message>
    <message>
        <source>&amp;Open recording…</source>
        <translation>打开录制文件(&amp;O)…</translation>
    </message>
    <message>
        <source>Play / pause the replay</source>
        <translation>播放 / 暂停回放</translation>
    </message>
    <message>
        <source>Scrub through every event of the run</source>
        <translation>拖动浏览运行中的每个事件</translation>
    </message>
    <message>
        <source>Replay speed: steps take milliseconds on real hardware; slow motion makes them watchable</source>
        <translation>回放速度：真实硬件上一步只需几毫秒；慢放让过程清晰可见</translation>
    </message>
    <message>
        <source>Charts for rank:</source>
        <translation>图表对应的 rank：</translation>
    </message>
    <message>
        <source>Memory over time</source>
        <translation>内存随时间变化</translation>
    </message>
    <message>
        <source>Loss</source>
        <translation>损失</translation>
    </message>
    <message>
        <source>&lt;b&gt;Model states per rank: %1 measured&lt;/b&gt; (theory %2) vs %3 with DDP → &lt;b&gt;%4× less memory&lt;/b&gt; (theory %5×). Peak on rank %6: %7.</source>
        <translation>&lt;b&gt;每个 rank 的模型状态：实测 %1&lt;/b&gt;（理论 %2），DDP 为 %3 → &lt;b&gt;内存减少 %4 倍&lt;/b&gt;（理论 %5 倍）。rank %6 的峰值：%7。</translation>
    </message>
    <message>
        <source>Starting %1 ranks as threads of one process…</source>
        <translation>正在以单进程内的 %1 个线程启动各 rank…</translation>
    </message>
    <message>
        <source>rank %1 %2</source>
        <translation>rank %1 %2</translation>
    </message>
    <message>
        <source>least %1 (rank %2)</source>
        <translation>最少 %1（rank %2）</translation>
    </message>
    <message>
        <source>most %1 (rank %2)</source>
        <translation>最多 %1（rank %2）</translation>
    </message>
    <message>
        <source>&lt;b&gt;Exposed communication&lt;/b&gt; (median share of a step waiting for communication no compute hid): %1.</source>
        <translation>&lt;b&gt;暴露通信&lt;/b&gt;（一步中等待未被计算掩盖的通信所占比例的中位数）：%1。</translation>
    </message>
    <message>
        <source>&lt;b&gt;GPU&lt;/b&gt; %1 (rank %2): pool high-water %3, outside the ledger %4.</source>
        <translation>&lt;b&gt;GPU&lt;/b&gt; %1（rank %2）：内存池高水位 %3，账本之外 %4。</translation>
    </message>
    <message>
        <source>Press &lt;b&gt;Run&lt;/b&gt; to train real sharded steps of a small GPT on CPU ranks (OpenMPI processes, or threads of one process), or open a recording.</source>
        <translation>点击&lt;b&gt;运行&lt;/b&gt;，在 CPU rank（OpenMPI 进程，或同一进程中的线程）上训练小型 GPT 的真实分片训练步，或打开录制文件。</translation>
    </message>
    <message>
        <source>CUDA</source>
        <translation>CUDA</translation>
    </message>
    <message>
        <source>threads</source>
        <translation>线程</translation>
    </message>
    <message>
        <source>The ranks ran as threads of one shardscope-worker process (--shared-device), not as mpirun processes.</source>
        <translation>各 rank 作为同一个 shardscope-worker 进程中的线程运行（--shared-device），而不是 mpirun 进程。</translation>
    </message>
    <message>
        <source>&lt;b&gt;Report unreadable&lt;/b&gt; — %1. The steps replay without it.</source>
        <translation>&lt;b&gt;报告无法读取&lt;/b&gt; — %1。各步骤仍可在没有报告的情况下回放。</translation>
    </message>
    <message>
        <source>Stopping the job…</source>
        <translation>正在停止作业…</translation>
    </message>
    <message numerus="yes">
        <source>Running on %n rank(s): step 1 of %1…</source>
        <translation>
            <numerusform>正在 %n 个 rank 上运行：第 1/%1 步…</numerusform>
        </translation>
    </message>
    <message>
        <source>The opened recording&apos;s settings cannot be shown here: %1. These are the next run&apos;s.</source>
        <translation>无法在此显示所打开录制文件的设置：%1。这里显示的是下一次运行的设置。</translation>
    </message>
    <message>
        <source>Running: step %1 of %2 finished, step %3 in progress…</source>
        <translation>运行中：第 %1/%2 步已完成，第 %3 步进行中…</translation>
    </message>
    <message>
        <source>Running: step %1 of %2 finished</source>
        <translation>运行中：第 %1/%2 步已完成</translation>
    </message>
    <message>
        <source>Settings of the opened recording (Run repeats it)</source>
        <translation>所打开录制文件的设置（点击“运行”可重复该运行）</translation>
    </message>
    <message>
        <source>%1 of %2 steps done</source>
        <translation>已完成 %1/%2 步</translation>
    </message>
    <message>
        <source>%1 steps done</source>
        <translation>已完成 %1 步</translation>
    </message>
    <message>
        <source>&lt;b&gt;Model states per rank: %1 measured&lt;/b&gt; (theory %2): DDP is the baseline, every rank holds everything; the sharded strategies are measured against it. Peak on rank %3: %4.</source>
        <translation>&lt;b&gt;每个 rank 的模型状态：实测 %1&lt;/b&gt;（理论 %2）：DDP 是基准，每个 rank 持有全部内容；分片策略都以它为参照。rank %3 的峰值：%4。</translation>
    </message>
    <message>
        <source>Stop the job and every process it started (Esc)</source>
        <translation>停止作业及其启动的所有进程（Esc）</translation>
    </message>
    <message>
        <source>Measured vs theory</source>
        <translation>实测与理论对比</translation>
    </message>
    <message>
        <source>Savings vs DDP</source>
        <translation>相对 DDP 的节省</translation>
    </message>
    <message>
        <source>Peak by tier: %1.</source>
        <translation>各层级峰值：%1。</translation>
    </message>
    <message>
        <source>Peak by tier: %1; the budget is the device&apos;s.</source>
        <translation>各层级峰值：%1；预算针对的是设备。</translation>
    </message>
    <message>
        <source>&lt;b&gt;Exposed communication&lt;/b&gt;: %1.</source>
        <translation>&lt;b&gt;暴露通信&lt;/b&gt;：%1。</translation>
    </message>
    <message>
        <source>%1 on the device</source>
        <translation>设备上 %1</translation>
    </message>
    <message>
        <source>Settings</source>
        <translation>设置</translation>
    </message>
    <message>
        <source>Show or fold away the run settings</source>
        <translation>显示或收起运行设置</translation>
    </message>
    <message>
        <source>%1 of %2 steps done, resumed after step %3</source>
        <translation>已完成 %1/%2 步，从第 %3 步之后恢复</translation>
    </message>
    <message>
        <source>resumed after step %1</source>
        <translation>从第 %1 步之后恢复</translation>
    </message>
    <message>
        <source>%1 on %2 ranks · model %3 (Ψ = %4, %5)</source>
        <translation>%1，%2 个 rank · 模型 %3（Ψ = %4，%5）</translation>
    </message>
    <message>
        <source>%1 pipeline stages</source>
        <translation>%1 个流水线阶段</translation>
    </message>
    <message>
        <source>TP %1</source>
        <translation>TP %1</translation>
    </message>
</context>
<context>
    <name>shardscope::widgets::RecordingFiles</name>
    <message>
        <source>Save recording</source>
        <translation>保存录制文件</translation>
    </message>
    <message>
        <source>ShardScope recordings (*.sstrace)</source>
        <translation>ShardScope 录制文件 (*.sstrace)</translation>
    </message>
    <message>
        <source>Export current view</source>
        <translation>导出当前视图</translation>
    </message>
    <message>
        <source>Export</source>
        <translation>导出</translation>
    </message>
    <message>
        <source>nothing to save: run a job or open a recording first</source>
        <translation>没有可保存的内容：请先运行任务或打开录制文件</translation>
    </message>
    <message>
        <source>cannot write %1: %2</source>
        <translation>无法写入 %1：%2</translation>
    </message>
    <message>
        <source>no page to export</source>
        <translation>没有可导出的页面</translation>
    </message>
    <message>
        <source>Open &amp;recent</source>
        <translation>最近打开(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;Save recording as…</source>
        <translation>录制文件另存为(&amp;S)…</translation>
    </message>
    <message>
        <source>Write the run shown (live or opened) as a .sstrace recording</source>
        <translation>将当前显示的运行（实时或已打开）写为 .sstrace 录制文件</translation>
    </message>
    <message>
        <source>&amp;Export current view…</source>
        <translation>导出当前视图(&amp;E)…</translation>
    </message>
    <message>
        <source>Save the current chart or view as PNG, SVG or PDF</source>
        <translation>将当前图表或视图保存为 PNG、SVG 或 PDF</translation>
    </message>
</context>
<context>
    <name>shardscope::widgets::ReplayPageBase</name>
    <message>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <source>Stop the running job: every rank ends, what it recorded stays (Esc)</source>
        <translation>停止正在运行的作业：所有 rank 都会结束，已记录的内容保留（Esc）</translation>
    </message>
</context>
<context>
    <name>shardscope::widgets::ReshardView</name>
    <message>
        <source>%1: %2 elements · padding %3 at N = %4, %5 at M = %6</source>
        <translation>%1：%2 个元素 · N = %4 时填充 %3，M = %6 时填充 %5</translation>
    </message>
    <message>
        <source>%1 (saved by rank %2): elements [%3, %4) of %5, %6 bytes (master, Adam m, Adam v)</source>
        <translation>%1（由 rank %2 保存）：%5 的元素 [%3, %4)，%6 字节（主权重、Adam m、Adam v）</translation>
    </message>
    <message>
        <source>Padding at N = %1: %2 element(s) that make %3 divisible into %1 equal shards. Never stored.</source>
        <translation>N = %1 时的填充：%2 个元素，使 %3 能分成 %1 个相等的分片。从不保存。</translation>
    </message>
    <message>
        <source>New rank %1 reads elements [%2, %3) from %4: master bytes %5–%6, Adam m %7–%8, Adam v %9–%10</source>
        <translation>新 rank %1 从 %4 读取元素 [%2, %3)：主权重字节 %5–%6，Adam m %7–%8，Adam v %9–%10</translation>
    </message>
    <message>
        <source>New rank %1 owns elements [%2, %3) of %4: %5 bytes to read</source>
        <translation>新 rank %1 拥有 %4 的元素 [%2, %3)：需读取 %5 字节</translation>
    </message>
    <message>
        <source>Padding at M = %1: %2 element(s) that make %3 divisible into %1 equal shards. Nothing is read for it.</source>
        <translation>M = %1 时的填充：%2 个元素，使 %3 能分成 %1 个相等的分片。不为它读取任何内容。</translation>
    </message>
    <message>
        <source>saved (N = %1)</source>
        <translation>已保存（N = %1）</translation>
    </message>
    <message>
        <source>rank %1 reads</source>
        <translation>rank %1 的读取</translation>
    </message>
    <message>
        <source>reads</source>
        <translation>读取</translation>
    </message>
    <message>
        <source>new (M = %1)</source>
        <translation>新（M = %1）</translation>
    </message>
</context>
<context>
    <name>shardscope::widgets::RunConfigPanel</name>
    <message>
        <source>&lt;b&gt;Theory per rank&lt;/b&gt;: model states %1 (DDP: %2, %3× less), predicted peak %4. Ψ = %5 parameters.</source>
        <translation>&lt;b&gt;每个 rank 的理论值&lt;/b&gt;：模型状态 %1（DDP：%2，减少 %3 倍），预测峰值 %4。Ψ = %5 个参数。</translation>
    </message>
    <message>
        <source>Theory cannot size this run: %1</source>
        <translation>理论模型无法估算此次运行：%1</translation>
    </message>
    <message>
        <source>Model preset</source>
        <translation>模型预设</translation>
    </message>
    <message>
        <source>Ranks</source>
        <translation>Rank 数</translation>
    </message>
    <message>
        <source>Backend</source>
        <translation>后端</translation>
    </message>
    <message>
        <source>Strategy</source>
        <translation>策略</translation>
    </message>
    <message>
        <source>Steps</source>
        <translation>步数</translation>
    </message>
    <message>
        <source>Micro-batch</source>
        <translation>微批大小</translation>
    </message>
    <message>
        <source>Capacity budget</source>
        <translation>容量预算</translation>
    </message>
    <message>
        <source>Bucket size</source>
        <translation>桶大小</translation>
    </message>
    <message>
        <source>Prefetch (units)</source>
        <translation>预取（单元数）</translation>
    </message>
    <message>
        <source>In-flight all-gathers</source>
        <translation>并行 all-gather 数</translation>
    </message>
    <message>
        <source>Persistence threshold</source>
        <translation>常驻阈值</translation>
    </message>
    <message>
        <source>Hybrid group (ranks)</source>
        <translation>混合分片组（rank 数）</translation>
    </message>
    <message>
        <source>GPU (CUDA)</source>
        <translation>GPU（CUDA）</translation>
    </message>
    <message>
        <source>Activation checkpointing</source>
        <translation>激活检查点</translation>
    </message>
    <message>
        <source>Keep only each block&apos;s input and recompute its activations in backward.</source>
        <translation>只保留每个块的输入，在反向传播时重新计算其激活。</translation>
    </message>
    <message>
        <source>Reshard after forward</source>
        <translation>前向后重新分片</translation>
    </message>
    <message>
        <source>FSDP: free the gathered parameters after forward and gather them again for backward.</source>
        <translation>FSDP：前向结束后释放已收集的参数，反向时再次收集。</translation>
    </message>
    <message>
        <source>none (e.g. 64MiB)</source>
        <translation>无（例如 64MiB）</translation>
    </message>
    <message>
        <source>Device memory budget per rank; an allocation beyond it fails the run and names what failed.</source>
        <translation>每个 rank 的设备内存预算；超出预算的分配会使运行失败，并指明失败的分配。</translation>
    </message>
    <message>
        <source>All-reduce / reduce-scatter bucket size (DDP, ZeRO-1/2) and all-gather bucket (ZeRO-1/2).</source>
        <translation>all-reduce / reduce-scatter 桶大小（DDP、ZeRO-1/2）以及 all-gather 桶大小（ZeRO-1/2）。</translation>
    </message>
    <message>
        <source>Units all-gathered ahead of the one computing (ZeRO-3, FSDP).</source>
        <translation>在当前计算单元之前提前 all-gather 的单元数（ZeRO-3、FSDP）。</translation>
    </message>
    <message>
        <source>FSDP&apos;s limit on all-gathers in flight at once.</source>
        <translation>FSDP 对同时进行的 all-gather 数量的限制。</translation>
    </message>
    <message>
        <source>ZeRO-3: units with at most this many parameters stay whole on every rank.</source>
        <translation>ZeRO-3：参数量不超过此值的单元在每个 rank 上保持完整。</translation>
    </message>
    <message>
        <source>FSDP hybrid shard: ranks per shard group; must divide the ranks.</source>
        <translation>FSDP 混合分片：每个分片组的 rank 数；必须整除总 rank 数。</translation>
    </message>
    <message>
        <source>preset&apos;s</source>
        <translation>预设值</translation>
    </message>
    <message>
        <source>Precision</source>
        <translation>精度</translation>
    </message>
    <message>
        <source>%1: the ranks run as threads of one process</source>
        <translation>%1：各 rank 作为同一进程中的线程运行</translation>
    </message>
    <message>
        <source>All %1 ranks share GPU 0, each with its own stream and memory pool.</source>
        <translation>全部 %1 个 rank 共用 GPU 0，各自有独立的流和内存池。</translation>
    </message>
    <message>
        <source>One worker process, no mpirun: the ranks exchange data through shared memory.</source>
        <translation>单个 worker 进程，无需 mpirun：各 rank 通过共享内存交换数据。</translation>
    </message>
    <message>
        <source>CPU</source>
        <translation>CPU</translation>
    </message>
    <message>
        <source>Ranks as threads in one process (no MPI)</source>
        <translation>以单进程内的线程运行各 rank（无需 MPI）</translation>
    </message>
    <message>
        <source>Run every rank as a thread of one shardscope-worker process (--shared-device --ranks N) instead of one process per rank under mpirun. On the CPU the ranks exchange data through shared memory; with the GPU backend they all share GPU 0. Needed for more ranks than GPUs.</source>
        <translation>把每个 rank 作为同一个 shardscope-worker 进程中的线程运行（--shared-device --ranks N），而不是在 mpirun 下每个 rank 一个进程。在 CPU 上各 rank 通过共享内存交换数据；使用 GPU 后端时它们共用 GPU 0。rank 数多于 GPU 数时必须使用此模式。</translation>
    </message>
    <message>
        <source>Every rank computes on the CPU.</source>
        <translation>每个 rank 都在 CPU 上计算。</translation>
    </message>
    <message>
        <source>%1 does not shard the optimizer: every rank updates everything on its device.</source>
        <translation>%1 不对优化器分片：每个 rank 都在自己的设备上更新全部参数。</translation>
    </message>
    <message>
        <source>Offload keeps fp32 master weights beside bf16 parameters: choose bf16 precision.</source>
        <translation>卸载会在 bf16 参数之外保留 fp32 主权重：请选择 bf16 精度。</translation>
    </message>
    <message>
        <source>%1 keeps whole parameters on every device: only ZeRO-3 and FSDP shard them.</source>
        <translation>%1 在每个设备上都保留完整参数：只有 ZeRO-3 和 FSDP 对参数分片。</translation>
    </message>
    <message>
        <source>ZeRO-Offload: master weights, Adam m and v (and gradient shards) in host memory; the optimizer step runs on the CPU.</source>
        <translation>ZeRO-Offload：主权重、Adam m 和 v（以及梯度分片）放在主机内存中；优化器步骤在 CPU 上运行。</translation>
    </message>
    <message>
        <source>ZeRO-Offload: parameter shards in host memory, copied to the device before each all-gather.</source>
        <translation>ZeRO-Offload：参数分片放在主机内存中，每次 all-gather 之前复制到设备。</translation>
    </message>
    <message>
        <source>The predicted peak per rank (%1) exceeds the budget (%2): the run is expected to stop with out of memory.</source>
        <translation>每个 rank 的预测峰值（%1）超出预算（%2）：预计运行会因内存不足而停止。</translation>
    </message>
    <message>
        <source>Optimizer states</source>
        <translation>优化器状态</translation>
    </message>
    <message>
        <source>Parameter shards</source>
        <translation>参数分片</translation>
    </message>
    <message>
        <source>Tensor parallel (T)</source>
        <translation>张量并行（T）</translation>
    </message>
    <message>
        <source>on the device</source>
        <translation>位于设备</translation>
    </message>
    <message>
        <source>offloaded to host memory</source>
        <translation>卸载到主机内存</translation>
    </message>
    <message>
        <source>Tensor parallelism: the ranks form a T × D mesh. Each group of T consecutive ranks splits every block&apos;s computation (heads and MLP features; all-reduces of activations), and the strategy shards each slice&apos;s states over the D data-parallel ranks. T must divide the ranks and the model&apos;s heads (the *_tp presets have 4).</source>
        <translation>张量并行：各 rank 组成 T × D 网格。每组 T 个连续的 rank 切分每个块的计算（注意力头和 MLP 特征；对激活值做 all-reduce），策略再把每个切片的状态分片到 D 个数据并行 rank 上。T 必须整除 rank 数和模型的注意力头数（*_tp 预设有 4 个头）。</translation>
    </message>
    <message>
        <source>ZeRO-Infinity: the states live in files under the NVMe folder, read and written with O_DIRECT through asynchronous I/O while the ranks compute.</source>
        <translation>ZeRO-Infinity：状态存放在 NVMe 文件夹下的文件中，在各 rank 计算的同时通过异步 I/O 以 O_DIRECT 方式读写。</translation>
    </message>
    <message>
        <source>Folder for the NVMe tier&apos;s files</source>
        <translation>NVMe 层级文件所在的文件夹</translation>
    </message>
    <message>
        <source>Save checkpoints to</source>
        <translation>检查点保存到</translation>
    </message>
    <message>
        <source>Save every K steps</source>
        <translation>每 K 步保存</translation>
    </message>
    <message>
        <source>Resume from</source>
        <translation>恢复自</translation>
    </message>
    <message>
        <source>NVMe folder</source>
        <translation>NVMe 文件夹</translation>
    </message>
    <message>
        <source>I/O block size</source>
        <translation>I/O 块大小</translation>
    </message>
    <message>
        <source>I/O queue depth</source>
        <translation>I/O 队列深度</translation>
    </message>
    <message>
        <source>offloaded to NVMe files</source>
        <translation>卸载到 NVMe 文件</translation>
    </message>
    <message>
        <source>a folder on a fast disk</source>
        <translation>高速磁盘上的文件夹</translation>
    </message>
    <message>
        <source>--nvme-dir: one file per rank holds its offloaded states; removed when the run ends.</source>
        <translation>--nvme-dir：每个 rank 一个文件，存放其卸载的状态；运行结束时删除。</translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <source>Advanced NVMe I/O</source>
        <translation>高级 NVMe I/O</translation>
    </message>
    <message>
        <source>--aio-block-bytes: bytes per read or write (a multiple of 4 KiB; DeepSpeed&apos;s aio block_size).</source>
        <translation>--aio-block-bytes：每次读或写的字节数（4 KiB 的整数倍；即 DeepSpeed aio 的 block_size）。</translation>
    </message>
    <message>
        <source>--aio-queue-depth: reads and writes in flight at once (DeepSpeed&apos;s aio queue_depth).</source>
        <translation>--aio-queue-depth：同时进行的读写数量（即 DeepSpeed aio 的 queue_depth）。</translation>
    </message>
    <message>
        <source>none (a folder)</source>
        <translation>无（一个文件夹）</translation>
    </message>
    <message>
        <source>Save a checkpoint into this folder after the last step (and every K steps): it restores at any number of ranks and any strategy.</source>
        <translation>在最后一步之后（以及每 K 步）把检查点保存到此文件夹：它可以在任意 rank 数和任意策略下恢复。</translation>
    </message>
    <message>
        <source>after the last step only</source>
        <translation>仅在最后一步之后</translation>
    </message>
    <message>
        <source>Also save after every K steps; the folder&apos;s “latest” names the newest complete one.</source>
        <translation>另外每 K 步也保存一次；文件夹中的“latest”指向最新的完整检查点。</translation>
    </message>
    <message>
        <source>none: start from step 1</source>
        <translation>无：从第 1 步开始</translation>
    </message>
    <message>
        <source>A checkpoint folder (its latest step) or one step-K folder in it. The run continues its step, data and seed; each rank reads only the byte ranges of its new shard.</source>
        <translation>一个检查点文件夹（取其最新步）或其中的某个 step-K 文件夹。运行会延续其步数、数据和随机种子；每个 rank 只读取其新分片的字节范围。</translation>
    </message>
    <message>
        <source>&lt;b&gt;Theory per rank&lt;/b&gt;: model states %1 on the device, %2 in all tiers (DDP: %3, %4× less), predicted peak %5. Ψ = %6 parameters.</source>
        <translation>&lt;b&gt;每个 rank 的理论值&lt;/b&gt;：设备上模型状态 %1，所有层级合计 %2（DDP：%3，减少 %4 倍），预测峰值 %5。Ψ = %6 个参数。</translation>
    </message>
    <message>
        <source>Also set, kept from the loaded run or configuration: %1</source>
        <translation>另外设置（沿用自已加载的运行或配置）：%1</translation>
    </message>
    <message>
        <source>Use defaults</source>
        <translation>恢复默认</translation>
    </message>
    <message>
        <source>Forget these settings: the next run uses their defaults.</source>
        <translation>清除这些设置：下一次运行使用它们的默认值。</translation>
    </message>
    <message>
        <source>Pipeline stages (P)</source>
        <translation>流水线阶段数（P）</translation>
    </message>
    <message>
        <source>Pipeline schedule</source>
        <translation>流水线调度</translation>
    </message>
    <message>
        <source>Micro-batches per step</source>
        <translation>每步微批次数</translation>
    </message>
    <message>
        <source>Pipeline parallelism: the ranks form a P × T × D mesh. The model&apos;s layers are split into P stages of consecutive layers; each stage&apos;s ranks hold only its layers, and activations (forward) and their gradients (backward) travel between neighbouring stages as messages. P must leave every stage a layer, and P × T must divide the ranks.</source>
        <translation>流水线并行：各 rank 组成 P × T × D 网格。模型的层被切分为 P 个由连续层组成的阶段；每个阶段的 rank 只持有本阶段的层，激活值（前向）及其梯度（反向）以消息形式在相邻阶段之间传递。P 必须让每个阶段至少有一层，且 P × T 必须整除 rank 数。</translation>
    </message>
    <message>
        <source>Micro-steps per optimizer step (gradient accumulation, --grad-accum). With pipeline stages these are the micro-batches the schedule sends through them (--micro-batches): more of them shrink the bubble, (P − 1)/(M + P − 1) of the step.</source>
        <translation>每个优化器步的微步数（梯度累积，--grad-accum）。有流水线阶段时，它就是调度送入各阶段的微批次数（--micro-batches）：微批次越多，气泡越小，占步长的 (P − 1)/(M + P − 1)。</translation>
    </message>
    <message>
        <source>(With %1 pipeline stages: stage %2&apos;s ranks, the fullest.)</source>
        <translation>（共 %1 个流水线阶段：此为最满的阶段 %2 的 rank。）</translation>
    </message>
    <message>
        <source>Chunks per rank (V)</source>
        <translation>每个 rank 的块数（V）</translation>
    </message>
    <message>
        <source>The order of each stage&apos;s forward and backward passes: GPipe runs every micro-batch&apos;s forward before any backward (the most activations in flight); 1F1B alternates them once the pipeline is full (at most P − s micro-batches on stage s); Interleaved 1F1B gives each rank V chunks of layers, which shrinks the bubble V times; Zero Bubble H1 splits each backward into the input gradients (B) and the weight gradients (W) and runs the Ws where the pipeline would idle.</source>
        <translation>每个阶段前向与反向的执行顺序：GPipe 先完成所有微批次的前向再做反向（在途激活最多）；1F1B 在流水线填满后交替执行两者（阶段 s 上最多 P − s 个微批次）；交错 1F1B 让每个 rank 持有 V 块层，使气泡缩小为 1/V；零气泡 H1 把每次反向拆成输入梯度（B）和权重梯度（W），并把 W 放在流水线原本空闲的时候执行。</translation>
    </message>
    <message>
        <source>Interleaved 1F1B: the layers are cut into P × V chunks and rank s holds chunks s, s + P, … (--virtual-stages). A micro-batch passes every rank V times: the bubble falls to (P − 1)/(V·M + P − 1), for V times the messages. The micro-batches per step must be a multiple of P.</source>
        <translation>交错 1F1B：把层切成 P × V 块，rank s 持有第 s、s + P、… 块（--virtual-stages）。一个微批次经过每个 rank V 次：气泡降为 (P − 1)/(V·M + P − 1)，代价是 V 倍的消息。每步的微批次数必须是 P 的倍数。</translation>
    </message>
</context>
<context>
    <name>shardscope::widgets::RunSession</name>
    <message>
        <source>Invalid settings: %1</source>
        <translation>设置无效：%1</translation>
    </message>
    <message>
        <source>shardscope-worker was not found at %1: build it beside the GUI (target shardscope-worker)</source>
        <translation>在 %1 找不到 shardscope-worker：请在 GUI 旁构建它（目标 shardscope-worker）</translation>
    </message>
    <message>
        <source>cannot create a private folder for the event stream: %1</source>
        <translation>无法为事件流创建私有目录：%1</translation>
    </message>
    <message>
        <source>cannot listen for the event stream: %1</source>
        <translation>无法监听事件流：%1</translation>
    </message>
    <message>
        <source>The event stream could not be read: %1</source>
        <translation>无法读取事件流：%1</translation>
    </message>
    <message>
        <source>The launcher failed: %1</source>
        <translation>启动器失败：%1</translation>
    </message>
    <message>
        <source>Rank %1 exited (signal %2) in step %3</source>
        <translation>rank %1 在第 %3 步退出（信号 %2）</translation>
    </message>
    <message>
        <source>Rank %1 exited (exit code %2) in step %3</source>
        <translation>rank %1 在第 %3 步退出（退出码 %2）</translation>
    </message>
    <message>
        <source>mpirun exited with code %1: %2</source>
        <translation>mpirun 以退出码 %1 结束：%2</translation>
    </message>
    <message>
        <source>Stopped before the first step</source>
        <translation>在第一步之前已停止</translation>
    </message>
    <message>
        <source>Run finished in %1 s</source>
        <translation>运行完成，用时 %1 秒</translation>
    </message>
    <message>
        <source>Cannot open the recording: %1</source>
        <translation>无法打开录制文件：%1</translation>
    </message>
    <message>
        <source>Opened %1</source>
        <translation>已打开 %1</translation>
    </message>
    <message numerus="yes">
        <source>Stopped after %n step(s)</source>
        <translation>
            <numerusform>已在 %n 步后停止</numerusform>
        </translation>
    </message>
    <message>
        <source>Rank %1 failed %2: %3</source>
        <translation>Rank %1 %2失败：%3</translation>
    </message>
    <message>
        <source>This recording ends early: %1</source>
        <translation>此记录提前结束：%1</translation>
    </message>
    <message>
        <source>This recording ends in a failure: rank %1 %2: %3</source>
        <translation>此录制以失败结束：rank %1 %2：%3</translation>
    </message>
    <message>
        <source>mpirun was not found on PATH: install OpenMPI (e.g. apt install openmpi-bin) to run jobs, or tick “Ranks as threads in one process”</source>
        <translation>在 PATH 中找不到 mpirun：请安装 OpenMPI（例如 apt install openmpi-bin）后再运行任务，或勾选“以单进程内的线程运行各 rank”</translation>
    </message>
    <message>
        <source>shardscope-cli was not found at %1: build it beside the GUI (target shardscope-cli); it supervises every run</source>
        <translation>在 %1 找不到 shardscope-cli：请在 GUI 旁边构建它（目标 shardscope-cli）；每次运行都由它监管</translation>
    </message>
    <message>
        <source>Run finished</source>
        <translation>运行完成</translation>
    </message>
    <message>
        <source>Rank %1 exited (signal %2)</source>
        <translation>Rank %1 已退出（信号 %2）</translation>
    </message>
    <message>
        <source>Rank %1 exited (exit code %2)</source>
        <translation>Rank %1 已退出（退出码 %2）</translation>
    </message>
    <message>
        <source>No progress in step %1 for the stall timeout: a rank is stuck; the job was torn down</source>
        <translation>第 %1 步在停滞超时内没有进展：有 rank 卡住了；作业已被终止</translation>
    </message>
    <message>
        <source>The job was interrupted in step %1 and torn down</source>
        <translation>作业在第 %1 步被中断并已终止</translation>
    </message>
    <message>
        <source>The worker refused its settings: %1</source>
        <translation>worker 拒绝了其设置：%1</translation>
    </message>
    <message>
        <source>The job could not run: %1</source>
        <translation>作业无法运行：%1</translation>
    </message>
    <message>
        <source>shardscope-cli did not run: %1</source>
        <translation>shardscope-cli 未能运行：%1</translation>
    </message>
    <message>
        <source>shardscope-cli was killed or crashed</source>
        <translation>shardscope-cli 被终止或崩溃</translation>
    </message>
    <message>
        <source>shardscope-cli exited with code %1: %2</source>
        <translation>shardscope-cli 以退出码 %1 结束：%2</translation>
    </message>
    <message>
        <source>The run ended without finishing its event stream (complete steps: %1)</source>
        <translation>运行结束时事件流未完整（完整的步数：%1）</translation>
    </message>
    <message>
        <source>The job ended in step %1: %2</source>
        <translation>作业在第 %1 步结束：%2</translation>
    </message>
    <message>
        <source>The job ended: %1</source>
        <translation>作业已结束：%1</translation>
    </message>
    <message>
        <source>Rank %1 is stuck in step %2: %3; the job was torn down</source>
        <translation>Rank %1 在第 %2 步卡住：%3；作业已被终止</translation>
    </message>
    <message>
        <source>Rank %1 is stuck during setup: %2; the job was torn down</source>
        <translation>Rank %1 在初始化阶段卡住：%2；作业已被终止</translation>
    </message>
    <message>
        <source>mpirun was killed (signal %1) in step %2; the job was torn down</source>
        <translation>mpirun 在第 %2 步被终止（信号 %1）；作业已被终止</translation>
    </message>
    <message>
        <source>mpirun was killed (signal %1); the job was torn down</source>
        <translation>mpirun 被终止（信号 %1）；作业已被终止</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <source>cannot write the imported configuration&apos;s listing: %1</source>
        <translation>无法写入导入配置的清单：%1</translation>
    </message>
</context>
<context>
    <name>shardscope::widgets::SavingsChart</name>
    <message>
        <source>Savings vs DDP (model states)</source>
        <translation>相对 DDP 的节省（模型状态）</translation>
    </message>
    <message>
        <source>ranks N</source>
        <translation>rank 数 N</translation>
    </message>
    <message>
        <source>DDP ÷ this strategy, per rank</source>
        <translation>DDP ÷ 本策略（每个 rank）</translation>
    </message>
    <message>
        <source>theory: %1</source>
        <translation>理论：%1</translation>
    </message>
    <message>
        <source>N× (ZeRO-3 limit)</source>
        <translation>N 倍（ZeRO-3 极限）</translation>
    </message>
    <message>
        <source>ZeRO-1/2 limits</source>
        <translation>ZeRO-1/2 极限</translation>
    </message>
    <message>
        <source>measured: %1×</source>
        <translation>实测：%1 倍</translation>
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
    <message>
        <source>▼ 0 B on the device (all offloaded)</source>
        <translation>▼ 设备上 0 B（全部卸载）</translation>
    </message>
    <message>
        <source>limits %1</source>
        <translation>极限 %1</translation>
    </message>
</context>
<context>
    <name>shardscope::widgets::TimelinePage</name>
    <message>
        <source>Timeline</source>
        <translation>时间线</translation>
    </message>
    <message>
        <source>−</source>
        <translation>−</translation>
    </message>
    <message>
        <source>Zoom out (−)</source>
        <translation>缩小（−）</translation>
    </message>
    <message>
        <source>+</source>
        <translation>+</translation>
    </message>
    <message>
        <source>Zoom in (+)</source>
        <translation>放大（+）</translation>
    </message>
    <message>
        <source>Fit run</source>
        <translation>适应整个运行</translation>
    </message>
    <message>
        <source>Show the whole run (0)</source>
        <translation>显示整个运行（0）</translation>
    </message>
    <message>
        <source>Current step</source>
        <translation>当前步</translation>
    </message>
    <message>
        <source>Show the step at the playhead</source>
        <translation>显示播放头所在的步</translation>
    </message>
</context>
<context>
    <name>shardscope::widgets::TimelineView</name>
    <message>
        <source>unit %1</source>
        <translation>单元 %1</translation>
    </message>
    <message>
        <source>rank %1, %2</source>
        <translation>rank %1，%2</translation>
    </message>
    <message>
        <source>from %1 to %2</source>
        <translation>从 %1 到 %2</translation>
    </message>
    <message>
        <source>algbw %1, busbw %2</source>
        <translation>算法带宽 %1，总线带宽 %2</translation>
    </message>
    <message>
        <source>%1 of full parameters, alive from unshard to reshard</source>
        <translation>%1 的完整参数，从收集到重新分片期间一直存在</translation>
    </message>
    <message>
        <source>events %1–%2; click to seek here</source>
        <translation>事件 %1–%2；点击跳转到此处</translation>
    </message>
    <message>
        <source>%1 across %2 ranks</source>
        <translation>%1，跨 %2 个 rank</translation>
    </message>
    <message>
        <source>%1 at %2</source>
        <translation>%1，于 %2</translation>
    </message>
</context>
</TS>
